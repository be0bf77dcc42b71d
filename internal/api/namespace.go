package api

import (
	"context"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/litek8s/litek8s/internal/kv"
)

// Namespace deletion, as kube's namespace registry and NamespaceLifecycle
// admission do it: the first DELETE marks the namespace (deletionTimestamp,
// status.phase Terminating) and answers it; creates into it are then
// refused with 403; the namespace controller (internal/controllers/namespace)
// deletes its contents and, once it is empty, removes the "kubernetes"
// finalizer through the finalize subresource, which deletes the namespace.

// immortalNamespaces may not be deleted.
var immortalNamespaces = map[string]bool{"default": true, "kube-system": true, "kube-public": true}

func errImmortalNamespace(name string) error {
	return apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, name,
		fmt.Errorf("this namespace may not be deleted"))
}

// namespaceTerminating is NamespaceLifecycle's 403 for a create into a
// namespace being deleted.
func namespaceTerminating(q *request, name string) error {
	err := apierrors.NewForbidden(q.res.GroupResource(), name,
		fmt.Errorf("unable to create new content in namespace %s because it is being terminated", q.namespace))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    corev1.NamespaceTerminatingCause,
		Message: fmt.Sprintf("namespace %s is being terminated", q.namespace),
		Field:   "metadata.namespace",
	})
	return err
}

// deleteNamespaceOnce is one attempt of kube's namespace DELETE on cur.
func (s *Server) deleteNamespaceOnce(ctx context.Context, q *request, opts *metav1.DeleteOptions, cur *kv.Object) (*deleteResult, error) {
	gr := q.res.GroupResource()
	if p := opts.Preconditions; p != nil {
		if p.UID != nil && string(*p.UID) != cur.UID {
			return nil, apierrors.NewConflict(gr, q.name,
				fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, cur.UID))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != formatRV(cur.RV) {
			return nil, apierrors.NewConflict(gr, q.name,
				fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, cur.RV))
		}
	}
	obj, err := decodeStored(q.res, cur)
	if err != nil {
		return nil, err
	}
	if err := s.admitDelete(ctx, q, obj, opts); err != nil {
		return nil, err
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return nil, fmt.Errorf("api: stored namespace %s is a %T", q.name, obj)
	}
	if ns.DeletionTimestamp == nil {
		now := metav1.NewTime(s.cfg.Now())
		ns.DeletionTimestamp = &now
		ns.Status.Phase = corev1.NamespaceTerminating
		ns.Finalizers = namespaceGCFinalizers(ns.Finalizers, opts)
		raw, _, err := s.writeDeletionMark(ctx, q, ns, cur, opts)
		if err != nil {
			return nil, err
		}
		return &deleteResult{raw: raw, uid: cur.UID}, nil
	}
	if len(ns.Spec.Finalizers) > 0 {
		return &deleteResult{raw: cur.Raw, uid: cur.UID}, nil
	}
	return s.deleteOnce(ctx, q, opts, cur)
}

// namespaceGCFinalizers applies the propagation policy to a namespace's
// finalizers as the namespace registry does (orphan / foregroundDeletion).
func namespaceGCFinalizers(fs []string, opts *metav1.DeleteOptions) []string {
	has := map[string]bool{}
	for _, f := range fs {
		has[f] = true
	}
	orphan, foreground := has[metav1.FinalizerOrphanDependents], has[metav1.FinalizerDeleteDependents]
	//nolint:staticcheck // orphanDependents is deprecated but still honoured
	switch od := opts.OrphanDependents; {
	case od != nil:
		orphan, foreground = *od, !*od
	case opts.PropagationPolicy != nil:
		orphan = *opts.PropagationPolicy == metav1.DeletePropagationOrphan
		foreground = *opts.PropagationPolicy == metav1.DeletePropagationForeground
	}
	if orphan == has[metav1.FinalizerOrphanDependents] && foreground == has[metav1.FinalizerDeleteDependents] {
		return fs
	}
	out := make([]string, 0, len(fs)+1)
	for _, f := range fs {
		if f != metav1.FinalizerOrphanDependents && f != metav1.FinalizerDeleteDependents {
			out = append(out, f)
		}
	}
	if orphan {
		out = append(out, metav1.FinalizerOrphanDependents)
	}
	if foreground {
		out = append(out, metav1.FinalizerDeleteDependents)
	}
	return out
}

// finalize serves PUT /api/v1/namespaces/{name}/finalize: only
// spec.finalizers changes (kube's namespace finalize strategy).
func (s *Server) finalize(w http.ResponseWriter, r *http.Request, q *request) error {
	return serveWrite(s, w, r, parseUpdateOptions, func(opts *writeOptions, ws *warnings) (*writeResult, error) {
		body, err := s.decodeBody(r, q.res, opts.validation, ws)
		if err != nil {
			return nil, err
		}
		return s.guaranteedUpdate(r.Context(), &mutation{q: q, opts: opts, ws: ws,
			desired: func(old runtime.Object, _ *kv.Object) (runtime.Object, error) {
				return s.withFinalizers(q, old, body.DeepCopyObject(), opts.manager)
			}})
	})
}

// withFinalizers returns old with the spec.finalizers (and the
// resourceVersion precondition) of obj, tracked as a finalize update.
func (s *Server) withFinalizers(q *request, old, obj runtime.Object, manager string) (runtime.Object, error) {
	ns, ok := obj.(*corev1.Namespace)
	out, ok2 := old.DeepCopyObject().(*corev1.Namespace)
	if !ok || !ok2 {
		return nil, badRequest("not a Namespace")
	}
	if ns.Name != q.name {
		return nil, badRequest("the name of the object (%s) does not match the name on the URL (%s)", ns.Name, q.name)
	}
	out.Spec.Finalizers = ns.Spec.Finalizers
	out.ResourceVersion = ns.ResourceVersion
	return s.trackUpdate(q.res, "finalize", old, out, manager)
}
