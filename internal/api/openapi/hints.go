package openapi

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
)

// mergeHints is what client-go's structured-merge-diff schema (generated
// from kube's own OpenAPI, shipped for server-side apply) knows and the Go
// types do not say: list and map types (+listType, +listMapKey, +mapType,
// +structType), field defaults (+default) and unions. It covers the types
// of built-in kinds; list kinds, Status and options types are not in it.
// Immutable once loaded.
type mergeHints struct {
	types map[string]*smdschema.Map // struct definitions by definition name
}

// loadMergeHints loads the schema through the first kind the structured-
// merge-diff parser knows. Kinds it does not know (custom types) get no
// hints, which only makes their documents plainer.
func loadMergeHints(kinds []Kind) *mergeHints {
	scheme := runtime.NewScheme()
	for _, k := range kinds {
		gvk := k.groupVersion().withKind(k.Kind)
		if k.Type != nil && !scheme.Recognizes(gvk) {
			scheme.AddKnownTypeWithName(gvk, newObject(k.Type))
		}
	}
	converter := applyconfigurations.NewTypeConverter(scheme)
	for _, k := range kinds {
		if k.Type == nil {
			continue
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(k.groupVersion().withKind(k.Kind))
		if tv, err := converter.ObjectToTyped(u); err == nil {
			return indexMergeSchema(tv.Schema())
		}
	}
	return &mergeHints{}
}

func indexMergeSchema(s *smdschema.Schema) *mergeHints {
	h := &mergeHints{types: make(map[string]*smdschema.Map, len(s.Types))}
	for i := range s.Types {
		if m := s.Types[i].Map; m != nil {
			h.types[s.Types[i].Name] = m
		}
	}
	return h
}

func newObject(t reflect.Type) runtime.Object {
	return reflect.New(t).Interface().(runtime.Object) // checked by Kind.validate
}

// fieldHint is what the merge schema says about one field.
type fieldHint struct {
	known       bool // the merge schema has the type: def is authoritative
	def         any  // default value, JSON-ready; nil for none
	listType    string
	listMapKeys []string
	mapType     string
}

// field returns the hint for field of definition typeName.
func (h *mergeHints) field(typeName, field string) fieldHint {
	m, ok := h.types[typeName]
	if !ok {
		return fieldHint{}
	}
	sf, ok := m.FindField(field)
	if !ok {
		return fieldHint{known: true}
	}
	hint := fieldHint{known: true, def: jsonValue(sf.Default)}
	if l := sf.Type.Inlined.List; l != nil {
		hint.listType, hint.listMapKeys = listType(l)
	}
	if mm := sf.Type.Inlined.Map; mm != nil {
		hint.mapType = mapType(mm.ElementRelationship)
	}
	return hint
}

// listType maps a list's element relationship to x-kubernetes-list-type
// and x-kubernetes-list-map-keys.
func listType(l *smdschema.List) (string, []string) {
	switch l.ElementRelationship {
	case smdschema.Atomic:
		return "atomic", nil
	case smdschema.Associative:
		if len(l.Keys) == 0 {
			return "set", nil
		}
		return "map", l.Keys
	}
	return "", nil
}

// mapType maps a map's element relationship to x-kubernetes-map-type.
// An unset relationship means no explicit +mapType.
func mapType(r smdschema.ElementRelationship) string {
	switch r {
	case smdschema.Atomic:
		return "atomic"
	case smdschema.Separable:
		return "granular"
	}
	return ""
}

// decorateType adds the type-level extensions of definition name:
// x-kubernetes-map-type for atomic structs and x-kubernetes-unions.
func (h *mergeHints) decorateType(name string, s *spec.Schema) {
	m, ok := h.types[name]
	if !ok {
		return
	}
	if m.ElementRelationship == smdschema.Atomic {
		s.AddExtension("x-kubernetes-map-type", "atomic")
	}
	if len(m.Unions) > 0 {
		s.AddExtension("x-kubernetes-unions", unions(m.Unions))
	}
}

// unions renders unions the way kube's OpenAPI extension spells them.
func unions(us []smdschema.Union) []map[string]any {
	out := make([]map[string]any, 0, len(us))
	for _, u := range us {
		fields := make(map[string]string, len(u.Fields))
		for _, f := range u.Fields {
			fields[f.FieldName] = f.DiscriminatorValue
		}
		ext := map[string]any{"fields-to-discriminateBy": fields}
		if u.Discriminator != nil {
			ext["discriminator"] = *u.Discriminator
		}
		out = append(out, ext)
	}
	return out
}

// jsonValue converts a YAML-decoded default (maps keyed by any) to a value
// encoding/json can marshal.
func jsonValue(v any) any {
	switch v := v.(type) {
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[fmt.Sprint(k)] = jsonValue(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = jsonValue(e)
		}
		return out
	}
	return v
}
