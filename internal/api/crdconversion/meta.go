package crdconversion

import (
	"errors"
	"fmt"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// checked verifies one converted object against its original as kube
// does (apiVersion, kind, name, namespace, uid) and returns it with the
// original's metadata, except the labels and annotations the webhook
// returned (validated when changed).
func checked(orig *unstructured.Unstructured, raw []byte, desired string) ([]byte, error) {
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	if got := out.GetAPIVersion(); got != desired {
		return nil, fmt.Errorf("invalid groupVersion (expected %v, received %v)", desired, got)
	}
	for _, c := range []struct{ what, want, got string }{
		{"kind", orig.GetKind(), out.GetKind()},
		{"name", orig.GetName(), out.GetName()},
		{"namespace", orig.GetNamespace(), out.GetNamespace()},
		{"UID", string(orig.GetUID()), string(out.GetUID())},
	} {
		if c.want != c.got {
			return nil, fmt.Errorf("must have the same %s: %v != %v", c.what, c.want, c.got)
		}
	}
	if err := restoreMeta(orig, out); err != nil {
		return nil, err
	}
	return out.MarshalJSON() // map keys sorted, as stored objects are
}

// restoreMeta replaces out's metadata by orig's, keeping out's labels and
// annotations (kube lets a conversion change only these).
func restoreMeta(orig, out *unstructured.Unstructured) error {
	resp, ok := out.Object["metadata"].(map[string]any)
	if !ok {
		return errors.New("missing metadata in converted object")
	}
	meta := map[string]any{}
	if m, ok := orig.Object["metadata"].(map[string]any); ok {
		meta = runtime.DeepCopyJSONValue(m).(map[string]any)
	}
	out.Object["metadata"] = meta
	for _, fld := range []string{"labels", "annotations"} {
		v, found := resp[fld]
		if !found || v == nil {
			delete(meta, fld)
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("invalid metadata.%s of type %T in converted object", fld, v)
		}
		before, _ := meta[fld].(map[string]any)
		changed := len(before) != len(m)
		strs := make(map[string]string, len(m))
		for k, x := range m {
			s, ok := x.(string)
			if !ok {
				return fmt.Errorf("metadata.%s[%s] must be a string, but is %T in converted object", fld, k, x)
			}
			if before[k] != any(s) {
				changed = true
			}
			strs[k] = s
		}
		if changed {
			var errs field.ErrorList
			if fld == "labels" {
				errs = metav1validation.ValidateLabels(strs, field.NewPath("metadata", "labels"))
			} else {
				errs = apivalidation.ValidateAnnotations(strs, field.NewPath("metadata", "annotation"))
			}
			if len(errs) > 0 {
				return errs.ToAggregate()
			}
		}
		meta[fld] = m
	}
	return nil
}
