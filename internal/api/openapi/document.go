package openapi

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// document is one served group-version document.
type document struct {
	body []byte
	hash string // upper-case hex SHA-512 of body: its Etag and ?hash=
}

func newDocument(doc *spec3.OpenAPI) (document, error) {
	body, err := json.Marshal(doc)
	if err != nil {
		return document{}, fmt.Errorf("openapi: marshal document: %w", err)
	}
	return document{body: body, hash: fmt.Sprintf("%X", sha512.Sum512(body))}, nil
}

// schemaGVK is one entry of a schema's x-kubernetes-group-version-kind.
type schemaGVK struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

// buildDocument generates the document of group-version gv serving kinds.
func buildDocument(gv groupVersion, kinds []Kind, hints *mergeHints, version string) (*spec3.OpenAPI, error) {
	b := newSchemaBuilder(hints)
	refs, resourceList, err := defineCommon(b, gv)
	if err != nil {
		return nil, err
	}
	paths := map[string]*spec3.Path{gv.urlPrefix() + "/": discoveryPath(gv, resourceList)}
	for _, k := range kinds {
		if k.Schema != nil {
			if refs.object, refs.list, err = defineCustom(b, k); err != nil {
				return nil, err
			}
			maps.Copy(paths, kindPaths(k, refs))
			continue
		}
		if refs.object, err = defineKind(b, k.Type, schemaGVK{k.Group, k.Kind, k.Version}); err != nil {
			return nil, err
		}
		if refs.list, err = defineKind(b, k.ListType, schemaGVK{k.Group, k.ListType.Name(), k.Version}); err != nil {
			return nil, err
		}
		maps.Copy(paths, kindPaths(k, refs))
	}
	return &spec3.OpenAPI{
		Version: "3.0.0",
		Info:    &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: version}},
		Paths:   &spec3.Paths{Paths: paths},
		Components: &spec3.Components{
			Schemas:         b.defs,
			SecuritySchemes: spec3.SecuritySchemes{"BearerToken": bearerToken()},
		},
	}, nil
}

// defineCommon defines the meta types every document's operations use and
// returns their references; the kind references are left empty.
func defineCommon(b *schemaBuilder, gv groupVersion) (kindRefs, string, error) {
	core := func(kind string) schemaGVK { return schemaGVK{"", kind, "v1"} }
	deleteGVKs := []schemaGVK{core("DeleteOptions")}
	if gv.group != "" {
		deleteGVKs = append(deleteGVKs, schemaGVK{gv.group, "DeleteOptions", gv.version})
	}
	var refs kindRefs
	var resourceList string
	var err error
	for _, d := range []struct {
		ref  *string
		t    reflect.Type
		gvks []schemaGVK
	}{
		{&refs.deleteOptions, reflect.TypeFor[metav1.DeleteOptions](), deleteGVKs},
		{&refs.status, reflect.TypeFor[metav1.Status](), []schemaGVK{core("Status")}},
		{&refs.patch, reflect.TypeFor[metav1.Patch](), nil},
		{&resourceList, reflect.TypeFor[metav1.APIResourceList](), []schemaGVK{core("APIResourceList")}},
	} {
		if *d.ref, err = defineKind(b, d.t, d.gvks...); err != nil {
			return kindRefs{}, "", err
		}
	}
	return refs, resourceList, nil
}

// defineKind defines t, tags it with gvks and returns its reference.
func defineKind(b *schemaBuilder, t reflect.Type, gvks ...schemaGVK) (string, error) {
	name, err := b.define(t)
	if err != nil {
		return "", err
	}
	s := b.defs[name]
	if len(gvks) > 0 {
		prev, _ := s.Extensions["x-kubernetes-group-version-kind"].([]schemaGVK)
		s.AddExtension("x-kubernetes-group-version-kind", appendNew(prev, gvks...))
	}
	return refTo(name), nil
}

func appendNew(list []schemaGVK, add ...schemaGVK) []schemaGVK {
	for _, g := range add {
		if !slices.Contains(list, g) {
			list = append(list, g)
		}
	}
	return list
}

// discoveryPath is the group-version's resource list (legacy discovery).
func discoveryPath(gv groupVersion, resourceList string) *spec3.Path {
	get := operation(gv, "get"+operationPrefix(gv)+"APIResources", "get available resources", nil, nil,
		responses(resourceList, objectMediaTypes(), 200))
	return &spec3.Path{PathProps: spec3.PathProps{Get: get}}
}

func bearerToken() *spec3.SecurityScheme {
	return &spec3.SecurityScheme{SecuritySchemeProps: spec3.SecuritySchemeProps{
		Type: "apiKey", Description: "Bearer Token authentication", Name: "authorization", In: "header",
	}}
}

// serverVersion is the info.version of the documents: the Kubernetes
// minor version of the k8s.io/api types served ("v0.37.2" -> "1.37").
func serverVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, m := range info.Deps {
		if m.Path != "k8s.io/api" {
			continue
		}
		parts := strings.SplitN(strings.TrimPrefix(m.Version, "v"), ".", 3)
		if len(parts) >= 2 && parts[0] == "0" {
			return "1." + parts[1]
		}
	}
	return "unknown"
}
