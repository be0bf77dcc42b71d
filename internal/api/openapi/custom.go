package openapi

import (
	"reflect"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// defineCustom defines a custom resource's object and list schemas the way
// kube's apiextensions server publishes them: the CRD's schema with
// apiVersion, kind and metadata (a reference to ObjectMeta) added, named
// after the reversed group ("com.example.golden.v1.Widget").
func defineCustom(b *schemaBuilder, k Kind) (object, list string, err error) {
	meta, err := b.define(reflect.TypeFor[metav1.ObjectMeta]())
	if err != nil {
		return "", "", err
	}
	listMeta, err := b.define(reflect.TypeFor[metav1.ListMeta]())
	if err != nil {
		return "", "", err
	}
	prefix := reversedGroup(k.Group) + "." + k.Version + "."
	obj := *k.Schema
	obj.Properties = make(map[string]spec.Schema, len(k.Schema.Properties)+3)
	for name, p := range k.Schema.Properties {
		obj.Properties[name] = p
	}
	apiVersion, kind := typeMetaProperties()
	obj.Properties["apiVersion"], obj.Properties["kind"] = apiVersion, kind
	obj.Properties["metadata"] = *described(refSchema(meta),
		"Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata")
	obj.AddExtension("x-kubernetes-group-version-kind", []schemaGVK{{k.Group, k.Kind, k.Version}})
	b.defs[prefix+k.Kind] = &obj

	items := described(spec.ArrayProperty(refSchema(refTo(prefix+k.Kind))),
		"List of "+k.Resource+". More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md")
	l := &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Required: []string{"items"},
		Properties: map[string]spec.Schema{
			"apiVersion": apiVersion, "kind": kind, "items": *items,
			"metadata": *described(refSchema(listMeta),
				"Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"),
		}}}
	l.AddExtension("x-kubernetes-group-version-kind", []schemaGVK{{k.Group, k.ListKind, k.Version}})
	b.defs[prefix+k.ListKind] = l
	return refTo(prefix + k.Kind), refTo(prefix + k.ListKind), nil
}

// typeMetaProperties are apiVersion and kind with TypeMeta's
// descriptions, as kube publishes them for custom resources (kubectl
// explain prints them).
func typeMetaProperties() (apiVersion, kind spec.Schema) {
	doc := metav1.TypeMeta{}.SwaggerDoc()
	return *described(spec.StringProperty(), doc["apiVersion"]), *described(spec.StringProperty(), doc["kind"])
}

// described sets s's description and returns s.
func described(s *spec.Schema, description string) *spec.Schema {
	s.Description = description
	return s
}

func refSchema(ref string) *spec.Schema {
	if !strings.HasPrefix(ref, "#/") {
		ref = refTo(ref)
	}
	return &spec.Schema{SchemaProps: spec.SchemaProps{AllOf: []spec.Schema{*spec.RefSchema(ref)}}}
}

func reversedGroup(group string) string {
	parts := strings.Split(group, ".")
	slices.Reverse(parts)
	return strings.Join(parts, ".")
}
