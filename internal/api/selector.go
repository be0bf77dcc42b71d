package api

import (
	"net/url"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/litek8s/litek8s/internal/kv"
)

// selector filters objects by label and field selectors. Labels and field
// values were parsed at apply time (kv.Derived), so matching parses nothing.
type selector struct {
	labels labels.Selector // nil: everything
	fields fields.Selector // nil: everything
}

func parseSelector(q url.Values) (*selector, error) {
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
		for _, req := range p.Requirements() {
			if req.Field != "metadata.name" && req.Field != "metadata.namespace" {
				return nil, badRequest("field label not supported: %s", req.Field)
			}
		}
		if !p.Empty() {
			sel.fields = p
		}
	}
	return sel, nil
}

func (s *selector) everything() bool { return s.labels == nil && s.fields == nil }

func (s *selector) matches(obj *kv.Object) bool {
	if s.labels != nil && !s.labels.Matches(labels.Set(obj.Labels)) {
		return false
	}
	return s.fields == nil || s.fields.Matches(objectFields{obj})
}

// objectFields exposes an object's selectable fields without building a map.
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
