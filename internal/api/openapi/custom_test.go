package openapi

import (
	"strings"
	"testing"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// A custom resource's published schema describes apiVersion, kind,
// metadata and the list's items as kube's does: kubectl explain prints
// those descriptions (the e2e CustomResourcePublishOpenAPI specs look for
// "APIVersion defines").
func TestCustomKindDescriptions(t *testing.T) {
	k := Kind{Group: "golden.example.com", Version: "v1", Resource: "widgets", Kind: "Widget", ListKind: "WidgetList",
		Namespaced: true, Verbs: []string{"get", "list"},
		Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"},
			Properties: map[string]spec.Schema{"spec": *spec.MapProperty(nil)}}}}
	b := newSchemaBuilder(loadMergeHints([]Kind{k}))
	if _, _, err := defineCustom(b, k); err != nil {
		t.Fatal(err)
	}
	obj, list := b.defs["com.example.golden.v1.Widget"], b.defs["com.example.golden.v1.WidgetList"]
	if obj == nil || list == nil {
		t.Fatalf("definitions %v", b.defs)
	}
	for _, c := range []struct {
		s          *spec.Schema
		prop, want string
	}{
		{obj, "apiVersion", "APIVersion defines the versioned schema of this representation of an object."},
		{obj, "kind", "Kind is a string value representing the REST resource this object represents."},
		{obj, "metadata", "Standard object's metadata. More info:"},
		{list, "apiVersion", "APIVersion defines"},
		{list, "metadata", "Standard list metadata. More info:"},
		{list, "items", "List of widgets. More info:"},
	} {
		if d := c.s.Properties[c.prop].Description; !strings.HasPrefix(d, c.want) {
			t.Errorf("%s description %q, want it to start %q", c.prop, d, c.want)
		}
	}
	if _, ok := obj.Properties["spec"]; !ok {
		t.Error("the CRD's own properties are lost")
	}
}
