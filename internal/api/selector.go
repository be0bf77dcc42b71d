package api

import (
	"net/url"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
)

// selector filters objects by label and field selectors. Labels and field
// values were parsed at apply time (kv.Derived), so matching parses and
// allocates nothing.
type selector struct {
	labels labels.Selector // nil: everything
	fields fields.Selector // nil: everything
	// computed, for a custom resource with selectable fields, reads their
	// values from the object when it is matched (see registry/crd_fields.go).
	computed *registry.FieldSelectors
}

// parseSelector parses labelSelector and fieldSelector for resource res.
// A field label res does not support is a 400 worded as kube words it for
// that kind; labels kube converts ("spec.host") select the field they
// stand for.
func parseSelector(q url.Values, res *registry.Resource) (*selector, error) {
	sel := &selector{}
	if ls := q.Get("labelSelector"); ls != "" {
		p, err := labels.Parse(ls)
		if err != nil {
			return nil, badRequest("%v", err)
		}
		if !p.Empty() {
			sel.labels = p
		}
	}
	if fs := q.Get("fieldSelector"); fs != "" {
		p, err := fields.ParseSelector(fs)
		if err != nil {
			return nil, badRequest("%v", err)
		}
		fs := res.FieldSelectors()
		if p, err = p.Transform(fs.Convert); err != nil {
			return nil, badRequest("%v", err)
		}
		if !p.Empty() {
			sel.fields = p
			if res.Custom && selectsComputed(p) {
				sel.computed = fs
			}
		}
	}
	return sel, nil
}

// selectsComputed reports whether a custom resource's selector uses one
// of its selectable fields (their values are computed when matched);
// metadata.name and metadata.namespace come from the key.
func selectsComputed(p fields.Selector) bool {
	for _, r := range p.Requirements() {
		if r.Field != "metadata.name" && r.Field != "metadata.namespace" {
			return true
		}
	}
	return false
}

func (s *selector) everything() bool { return s.labels == nil && s.fields == nil }

func (s *selector) matches(obj *kv.Object) bool {
	if s.labels != nil && !s.labels.Matches(&obj.Labels) {
		return false
	}
	if s.fields == nil {
		return true
	}
	if s.computed != nil {
		return s.fields.Matches(s.computed.CustomFields(obj))
	}
	return s.fields.Matches(objectFields{obj})
}

// objectFields exposes an object's selectable fields without building a
// map: metadata.name and metadata.namespace from its key, the others from
// the values Derive computed (absent = "", as in kube's field sets).
type objectFields struct{ obj *kv.Object }

func (f objectFields) Has(field string) bool {
	switch field {
	case "metadata.name", "metadata.namespace":
		return true
	}
	_, ok := f.obj.Fields[field]
	return ok
}

func (f objectFields) Get(field string) string {
	switch field {
	case "metadata.name":
		return f.obj.Key.Name
	case "metadata.namespace":
		return f.obj.Key.Namespace
	}
	return f.obj.Fields[field]
}
