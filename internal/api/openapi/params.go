package openapi

import (
	"reflect"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Query parameters of each operation, derived like kube-apiserver derives
// them: from the json fields of the metav1 options struct the operation
// decodes its query into, described by that struct's SwaggerDoc.
func listParams() []*spec3.Parameter {
	return optionParams(reflect.TypeFor[metav1.ListOptions]())
}

func createParams() []*spec3.Parameter {
	return optionParams(reflect.TypeFor[metav1.CreateOptions]())
}

func updateParams() []*spec3.Parameter {
	return optionParams(reflect.TypeFor[metav1.UpdateOptions]())
}

func patchParams() []*spec3.Parameter {
	return optionParams(reflect.TypeFor[metav1.PatchOptions]())
}

func deleteParams() []*spec3.Parameter {
	return optionParams(reflect.TypeFor[metav1.DeleteOptions]())
}

// deleteCollectionParams: a collection delete takes the list selection
// (but not watching) and the delete options.
func deleteCollectionParams() []*spec3.Parameter {
	list := slices.DeleteFunc(listParams(), func(p *spec3.Parameter) bool {
		return p.Name == "watch" || p.Name == "allowWatchBookmarks"
	})
	return append(list, deleteParams()...)
}

// optionParams lists the query parameters an options struct decodes:
// its scalar and string-list json fields other than kind and apiVersion.
func optionParams(t reflect.Type) []*spec3.Parameter {
	var params []*spec3.Parameter
	for _, f := range jsonFields(t) {
		typ := paramType(f.typ)
		if typ == "" || f.name == "kind" || f.name == "apiVersion" {
			continue
		}
		params = append(params, queryParam(f.name, typ, f.doc))
	}
	return params
}

// paramType is the schema type of a query parameter of Go type t, or ""
// if t does not come from a query string (structs such as preconditions).
func paramType(t reflect.Type) string {
	t = derefType(t)
	if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String {
		return "string" // repeated parameter, e.g. dryRun
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int32, reflect.Int64:
		return "integer"
	}
	return ""
}

func queryParam(name, typ, doc string) *spec3.Parameter {
	return parameter(name, "query", typ, doc, false)
}

func pathParam(name, doc string) *spec3.Parameter {
	return parameter(name, "path", "string", doc, true)
}

// prettyParam is accepted by every kube endpoint.
func prettyParam() *spec3.Parameter {
	return queryParam("pretty", "string", "If 'true', then the output is pretty printed. "+
		"Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget).")
}

func parameter(name, in, typ, doc string, required bool) *spec3.Parameter {
	s := &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{typ}, UniqueItems: true}}
	return &spec3.Parameter{ParameterProps: spec3.ParameterProps{
		Name: name, In: in, Description: doc, Required: required, Schema: s,
	}}
}

// sortParams orders parameters by name, as kube does.
func sortParams(ps []*spec3.Parameter) {
	slices.SortFunc(ps, func(a, b *spec3.Parameter) int {
		return strings.Compare(a.Name, b.Name)
	})
}
