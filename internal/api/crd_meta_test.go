package api

import (
	"encoding/json"
	"slices"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/litek8s/litek8s/internal/api/registry"
)

// The unknown fields of a custom resource include those of its metadata
// and of its embedded resources' metadata, which kube decodes as
// ObjectMeta (the e2e FieldValidation "unknown metadata fields in both the
// root and embedded object of a CR").
func TestUnknownMetaFields(t *testing.T) {
	var sch apiextv1.JSONSchemaProps
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"spec":{"type":"object",
	 "x-kubernetes-preserve-unknown-fields":true,"properties":{
	  "template":{"type":"object","x-kubernetes-embedded-resource":true,"properties":{
	   "metadata":{"type":"object","properties":{"name":{"type":"string"}}},"spec":{"type":"object"}}},
	  "items":{"type":"array","items":{"type":"object","x-kubernetes-embedded-resource":true,
	   "x-kubernetes-preserve-unknown-fields":true}}}}}}`), &sch); err != nil {
		t.Fatal(err)
	}
	r := &registry.Resource{}
	if err := withSchema(r, &apiextv1.CustomResourceDefinitionVersion{Name: "v1",
		Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &sch}}, nil); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(`{"apiVersion":"g/v1","kind":"K","metadata":{"name":"a","unknownMeta":"x"},
	 "spec":{"other":1,"template":{"apiversion":"foo/v1","kind":"Sub","metadata":{"name":"s","unknownSubMeta":"x"}},
	  "items":[{"apiVersion":"v1","kind":"X","metadata":{"labels":{"a":"b"},"bad":1}}]}}`), &u.Object); err != nil {
		t.Fatal(err)
	}
	got := r.UnknownFields(u)
	want := []string{"metadata.unknownMeta", "spec.items[0].metadata.bad", "spec.template.metadata.unknownSubMeta", "spec.template.apiversion"}
	if !slices.Equal(got, want) {
		t.Errorf("unknown fields %q, want %q", got, want)
	}
	u.Object = map[string]any{"apiVersion": "g/v1", "kind": "K", "metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "y"}}}
	if got := r.UnknownFields(u); len(got) != 0 {
		t.Errorf("a resource with known metadata: unknown fields %q", got)
	}
}
