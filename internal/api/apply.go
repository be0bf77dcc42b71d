package api

import (
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/litek8s/litek8s/internal/api/registry"
)

// Server-side apply (application/apply-patch+yaml): the patch is merged
// into the stored object by the kind's FieldManager (structured-merge-diff,
// as in kube), which also decides conflicts with other managers (409 with
// kube's message unless force=true) and records the applied fields as the
// manager's Apply entry. An apply to a missing object creates it (201).

// decodeApplyPatch reads an apply patch (YAML or JSON).
func decodeApplyPatch(body []byte) (*unstructured.Unstructured, error) {
	p := &unstructured.Unstructured{Object: map[string]any{}}
	if err := yaml.Unmarshal(body, &p.Object); err != nil {
		return nil, badRequest("error decoding patch: %v", err)
	}
	return p, nil
}

// applyTo applies patch to live (the stored object, or an empty one of
// res for a create) as opts' manager. sub is "" or "status".
func (s *Server) applyTo(res *registry.Resource, sub string, live runtime.Object, patch *unstructured.Unstructured, body []byte, opts *writeOptions, ws *warnings) (runtime.Object, error) {
	fm, err := s.fieldManager(res, sub)
	if err != nil {
		return nil, err
	}
	if err := undeclaredApplyFields(res, patch); err != nil {
		return nil, err
	}
	obj, err := fm.Apply(live, patch.DeepCopy(), opts.explicitManager, opts.force)
	if err != nil {
		return nil, applyErr(err)
	}
	if err := strictApplyPatch(body, opts.validation, ws); err != nil {
		return nil, err
	}
	obj = subresourceOnly(sub, live, obj)
	return obj, nil
}

// undeclaredApplyFields refuses an apply patch of a custom resource with
// fields its version's schema does not declare (and does not preserve),
// with the message of kube's typed conversion, which fails on them
// whatever fieldValidation says.
func undeclaredApplyFields(res *registry.Resource, patch *unstructured.Unstructured) error {
	if !res.Custom || res.UnknownFields == nil {
		return nil
	}
	paths := res.UnknownFields(patch)
	if len(paths) == 0 {
		return nil
	}
	msgs := make([]string, len(paths))
	for i, p := range paths {
		msgs[i] = "." + p + ": field not declared in schema"
	}
	msg := msgs[0]
	if len(msgs) > 1 {
		msg = "errors:\n  " + strings.Join(msgs, "\n  ")
	}
	return unknownErr(fmt.Errorf("failed to create typed patch object (%s/%s; %s): %s",
		patch.GetNamespace(), patch.GetName(), patch.GroupVersionKind(), msg))
}

// strictApplyPatch reports duplicate fields of an apply patch (unknown
// fields are refused by the merge itself).
func strictApplyPatch(body []byte, fv fieldValidation, ws *warnings) error {
	if fv != validateStrict && fv != validateWarn {
		return nil
	}
	if err := yaml.UnmarshalStrict(body, &map[string]any{}); err != nil {
		if fv == validateStrict {
			return badRequest("error strict decoding patch: %v", err)
		}
		ws.add(err.Error())
	}
	return nil
}

// applyErr passes Status errors (conflicts, bad versions) through; other
// failures of the merge (a field the schema does not declare) are, as in
// kube, a 500 with no reason and the merge's message.
func applyErr(err error) error {
	if _, ok := err.(apierrors.APIStatus); ok {
		return err
	}
	return unknownErr(err)
}

// unknownErr is kube's answer to an error that is no Status.
func unknownErr(err error) error {
	return statusErr(http.StatusInternalServerError, metav1.StatusReasonUnknown, err.Error(), nil)
}

// statusOnly is a status update's result: the stored object with obj's
// status, managedFields and resourceVersion (the precondition, if any),
// and obj's labels, annotations, finalizers and owner references for the
// kinds whose kube status strategy keeps them (statusKeepsMeta). The
// spec a status update sends is ignored, as in kube.
func statusOnly(old, obj runtime.Object) runtime.Object {
	out := old.DeepCopyObject()
	copyStatus(out, obj)
	om, err1 := apimeta.Accessor(out)
	m, err2 := apimeta.Accessor(obj)
	if err1 == nil && err2 == nil {
		om.SetManagedFields(m.GetManagedFields())
		om.SetResourceVersion(m.GetResourceVersion())
		statusKeepsMeta(out, om, m)
	}
	return out
}
