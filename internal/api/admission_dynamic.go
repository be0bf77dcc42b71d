package api

import (
	"context"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kadmission "k8s.io/apiserver/pkg/admission"

	"github.com/litek8s/litek8s/internal/api/admission"
	"github.com/litek8s/litek8s/internal/auth"
)

// Dynamic admission (Config.Admission, package admission): the mutating
// plugins (webhooks) run before the built-in defaulting and validation of
// a write, the validating plugins (policies, webhooks) after it and
// before quota, as kube-apiserver orders them. Without a chain, or when
// no plugin has anything configured, nothing is built: one check.

// dynamicWrite is one write as the plugins see it. It is passed by
// value and its options are built only when a plugin runs, so that an
// idle chain allocates nothing.
type dynamicWrite struct {
	q        *request
	op       kadmission.Operation
	obj, old runtime.Object        // obj nil on DELETE, old nil on CREATE
	opts     *writeOptions         // create and update
	del      *metav1.DeleteOptions // delete
}

// admitMutating runs the mutating plugins on w; they may change w.obj in
// place (on DELETE they see the object as old and change nothing).
func (s *Server) admitMutating(ctx context.Context, w dynamicWrite) error {
	c := s.cfg.Admission
	if !c.Mutates(w.op) {
		return nil
	}
	a := s.dynamicAttributes(ctx, w)
	defer auditAdmission(ctx, a)
	return c.Admit(ctx, a, s.objects)
}

// admitValidating runs the validating plugins on w.
func (s *Server) admitValidating(ctx context.Context, w dynamicWrite) error {
	c := s.cfg.Admission
	if !c.Validates(w.op) {
		return nil
	}
	a := s.dynamicAttributes(ctx, w)
	defer auditAdmission(ctx, a)
	return c.Validate(ctx, a, s.objects)
}

func (s *Server) dynamicAttributes(ctx context.Context, w dynamicWrite) kadmission.Attributes {
	res := w.q.res
	name := w.q.name
	if name == "" && w.obj != nil { // a create: the object's name, empty with generateName
		if m, ok := w.obj.(metav1.Object); ok {
			name = m.GetName()
		}
	}
	var options runtime.Object
	var dryRun bool
	switch {
	case w.del != nil:
		options, dryRun = w.del, len(w.del.DryRun) > 0
	case w.op == kadmission.Create:
		o := w.opts
		options, dryRun = &metav1.CreateOptions{DryRun: dryRunList(o.dryRun), FieldManager: o.explicitManager, FieldValidation: string(o.validation)}, o.dryRun
	default: // TODO(admission): a PATCH's options are PatchOptions in kube.
		o := w.opts
		options, dryRun = &metav1.UpdateOptions{DryRun: dryRunList(o.dryRun), FieldManager: o.explicitManager, FieldValidation: string(o.validation)}, o.dryRun
	}
	return admission.NewAttributes(admission.Request{Kind: res.GVK(),
		Resource:    schema.GroupVersionResource{Group: res.Group, Version: res.Version, Resource: res.Resource},
		Subresource: w.q.subresource, Namespace: w.q.namespace, Name: name, Operation: w.op,
		Object: w.obj, OldObject: w.old, Options: options, DryRun: dryRun, User: auth.UserFrom(ctx)})
}

// createWrite, updateWrite and deleteWrite describe a write of q for the
// plugins.
func createWrite(q *request, obj runtime.Object, opts *writeOptions) dynamicWrite {
	return dynamicWrite{q: q, op: kadmission.Create, obj: obj, opts: opts}
}

func updateWrite(q *request, obj, old runtime.Object, opts *writeOptions) dynamicWrite {
	return dynamicWrite{q: q, op: kadmission.Update, obj: obj, old: old, opts: opts}
}

func deleteWrite(q *request, old runtime.Object, opts *metav1.DeleteOptions) dynamicWrite {
	return dynamicWrite{q: q, op: kadmission.Delete, old: old, del: opts}
}

func dryRunList(dryRun bool) []string {
	if dryRun {
		return []string{metav1.DryRunAll}
	}
	return nil
}

// admitDelete runs both chains on a DELETE of old, as kube's
// AdmissionToValidateObjectDeleteFunc does.
func (s *Server) admitDelete(ctx context.Context, q *request, old runtime.Object, opts *metav1.DeleteOptions) error {
	c := s.cfg.Admission
	if !c.Mutates(kadmission.Delete) && !c.Validates(kadmission.Delete) {
		return nil
	}
	w := deleteWrite(q, old, opts)
	if err := s.admitMutating(ctx, w); err != nil {
		return err
	}
	return s.admitValidating(ctx, w)
}

// withAdmissionWarnings puts kube's warning recorder, feeding ws, into
// r's context when a plugin may act (in place: the verb's closure holds
// r), so that plugins' warning.AddWarning reach the answer.
func (s *Server) withAdmissionWarnings(r *http.Request, ws *warnings) {
	if s.cfg.Admission.Idle() {
		return
	}
	*r = *r.WithContext(admission.WithWarnings(r.Context(), ws.add))
}

// auditAdmission adds the annotations the plugins recorded on a to the
// request's audit event (when it is audited).
func auditAdmission(ctx context.Context, a kadmission.Attributes) {
	rec, ok := ctx.Value(auditKey{}).(*auditRecord)
	if !ok {
		return
	}
	anns := admission.AuditAnnotations(a, string(rec.cfg.Level))
	if len(anns) == 0 {
		return
	}
	rec.mu.Lock()
	if rec.ev.Annotations == nil {
		rec.ev.Annotations = map[string]string{}
	}
	for k, v := range anns {
		rec.ev.Annotations[k] = v
	}
	rec.mu.Unlock()
}
