package openapi

import (
	"reflect"
	"strings"
)

// modelNamer is implemented by the k8s.io/api and apimachinery types
// (zz_generated.model_name.go): their OpenAPI definition name.
type modelNamer interface{ OpenAPIModelName() string }

// definitionName is the components/schemas name of a named Go type, as kube
// names it: the type's OpenAPIModelName, or its package path with the
// domain reversed ("k8s.io/api/core/v1".ConfigMap ->
// "io.k8s.api.core.v1.ConfigMap").
func definitionName(t reflect.Type) string {
	if n, ok := reflect.Zero(t).Interface().(modelNamer); ok {
		return n.OpenAPIModelName()
	}
	parts := strings.Split(t.PkgPath(), "/")
	if len(parts) > 0 && strings.Contains(parts[0], ".") {
		domain := strings.Split(parts[0], ".")
		for i, j := 0, len(domain)-1; i < j; i, j = i+1, j-1 {
			domain[i], domain[j] = domain[j], domain[i]
		}
		parts[0] = strings.Join(domain, ".")
	}
	return strings.Join(append(parts, t.Name()), ".")
}

// refTo is the JSON reference of a definition.
func refTo(name string) string { return "#/components/schemas/" + name }

// groupTag is kube's name of a group in operation tags and ids: "core" for
// the legacy group, else the group without ".k8s.io" in lower camel case
// ("coordination.k8s.io" -> "coordination", "golden.example.com" ->
// "goldenExampleCom").
func groupTag(group string) string {
	if group == "" {
		return "core"
	}
	parts := strings.FieldsFunc(strings.TrimSuffix(group, ".k8s.io"), func(r rune) bool {
		return r == '.' || r == '-'
	})
	for i := 1; i < len(parts); i++ {
		parts[i] = upperFirst(parts[i])
	}
	return strings.Join(parts, "")
}

// operationTag is the tag of every operation of a document: "apps_v1".
func operationTag(gv groupVersion) string { return groupTag(gv.group) + "_" + gv.version }

// operationPrefix is the group-version part of operation ids: "AppsV1".
func operationPrefix(gv groupVersion) string {
	return upperFirst(groupTag(gv.group)) + upperFirst(gv.version)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
