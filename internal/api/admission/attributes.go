package admission

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kadmission "k8s.io/apiserver/pkg/admission"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/litek8s/litek8s/internal/auth"
)

// Request describes one write for the plugins.
type Request struct {
	Kind        schema.GroupVersionKind
	Resource    schema.GroupVersionResource
	Subresource string
	Namespace   string
	// Name is empty on a create whose object has only generateName.
	Name      string
	Operation kadmission.Operation
	// Object is nil on DELETE; OldObject is nil on CREATE.
	Object, OldObject runtime.Object
	// Options are the request's CreateOptions, UpdateOptions,
	// PatchOptions or DeleteOptions.
	Options runtime.Object
	DryRun  bool
	// User is who writes (nil: the server itself).
	User *auth.User
}

// NewAttributes builds kube's attributes record of r; the annotations
// plugins add to it are kept for the audit event (AuditAnnotations).
func NewAttributes(r Request) kadmission.Attributes {
	var ui user.Info = &user.DefaultInfo{}
	if u := r.User; u != nil {
		ui = &user.DefaultInfo{Name: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
	}
	return &annotated{Attributes: kadmission.NewAttributesRecord(r.Object, r.OldObject, r.Kind, r.Namespace, r.Name, r.Resource,
		r.Subresource, r.Operation, r.Options, r.DryRun, ui)}
}

// annotated is kube's attributes record that also keeps the annotations
// added to it (kube's record hides them from everything but its own audit
// wrapper).
type annotated struct {
	kadmission.Attributes
	mu   sync.Mutex // guards anns: validating webhooks annotate concurrently
	anns map[string]annotation
}

type annotation struct {
	level auditinternal.Level
	value string
}

func (a *annotated) AddAnnotation(key, value string) error {
	return a.AddAnnotationWithLevel(key, value, auditinternal.LevelMetadata)
}

func (a *annotated) AddAnnotationWithLevel(key, value string, level auditinternal.Level) error {
	if err := a.Attributes.AddAnnotationWithLevel(key, value, level); err != nil { // checks and refuses overwrites
		return err
	}
	a.mu.Lock()
	if a.anns == nil {
		a.anns = map[string]annotation{}
	}
	a.anns[key] = annotation{level: level, value: value}
	a.mu.Unlock()
	return nil
}

// GetAnnotations implements kube's admission.AnnotationsGetter.
func (a *annotated) GetAnnotations(maxLevel auditinternal.Level) map[string]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out map[string]string
	for k, v := range a.anns {
		if v.level.Less(maxLevel) || v.level == maxLevel {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v.value
		}
	}
	return out
}

// AuditAnnotations returns the annotations plugins added to a (webhooks'
// auditAnnotations, patch and mutation records) at the audit level
// (Metadata, Request, RequestResponse) or below.
func AuditAnnotations(a kadmission.Attributes, level string) map[string]string {
	g, ok := a.(kadmission.AnnotationsGetter)
	if !ok {
		return nil
	}
	return g.GetAnnotations(auditinternal.Level(level))
}
