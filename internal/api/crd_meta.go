package api

import (
	"encoding/json"
	"fmt"
	"slices"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
)

// Unknown fields in the metadata of a custom resource: kube decodes the
// metadata of the root and of every embedded resource
// (x-kubernetes-embedded-resource) as an ObjectMeta, so a field ObjectMeta
// does not have is unknown there, whatever the CRD's schema says.
// (apiextensions' objectmeta package does this but imports the apiserver's
// global feature gates.)

// unknownMetaFields returns the paths ("metadata.x", "spec.template.metadata.y")
// of the fields of obj's metadata and of its embedded resources' metadata
// that ObjectMeta does not declare.
func unknownMetaFields(obj map[string]any, s *structuralschema.Structural) []string {
	embedded := embeddedMetaUnknown("", obj, s)
	slices.Sort(embedded) // as kube's coercion reports them
	return append(metaUnknown("", obj), embedded...)
}

// metaUnknown: the unknown fields of m["metadata"], prefixed with path.
func metaUnknown(path string, m map[string]any) []string {
	md, ok := m["metadata"]
	if !ok {
		return nil
	}
	b, err := json.Marshal(md)
	if err != nil {
		return nil
	}
	strict, err := kjson.UnmarshalStrict(b, &metav1.ObjectMeta{})
	if err != nil {
		return nil // malformed metadata is the validation's to refuse
	}
	var out []string
	for _, e := range strict {
		if fe, ok := e.(kjson.FieldError); ok {
			out = append(out, path+"metadata."+fe.FieldPath())
		}
	}
	return out
}

// embeddedMetaUnknown walks x along s and reports the unknown metadata
// fields of the embedded resources below it.
func embeddedMetaUnknown(path string, x any, s *structuralschema.Structural) []string {
	if s == nil {
		return nil
	}
	var out []string
	switch x := x.(type) {
	case map[string]any:
		if s.XEmbeddedResource && path != "" {
			out = append(out, metaUnknown(path+".", x)...)
		}
		for k, v := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if prop, ok := s.Properties[k]; ok {
				out = append(out, embeddedMetaUnknown(p, v, &prop)...)
			} else if s.AdditionalProperties != nil {
				out = append(out, embeddedMetaUnknown(p, v, s.AdditionalProperties.Structural)...)
			}
		}
	case []any:
		for i, v := range x {
			out = append(out, embeddedMetaUnknown(fmt.Sprintf("%s[%d]", path, i), v, s.Items)...)
		}
	}
	return out
}
