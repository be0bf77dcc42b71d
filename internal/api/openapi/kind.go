package openapi

import (
	"fmt"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kind describes one served resource: what its document paths and schemas
// are generated from.
type Kind struct {
	Group, Version, Resource, Kind string // "" group for core; Resource = plural
	Namespaced                     bool
	Type                           reflect.Type // e.g. reflect.TypeOf(corev1.ConfigMap{})
	ListType                       reflect.Type // e.g. reflect.TypeOf(corev1.ConfigMapList{})
	Verbs                          []string     // get list watch create update patch delete deletecollection
	// Schema is the object schema of a custom resource (from its CRD),
	// used instead of Type and ListType, which are then nil.
	Schema *spec.Schema
	// ListKind names a custom resource's list kind ("WidgetList").
	ListKind string
}

// isKnownVerb reports whether v is a verb a Kind may list, as in API
// discovery.
func isKnownVerb(v string) bool {
	switch v {
	case "get", "list", "watch", "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

func (k Kind) has(verb string) bool { return slices.Contains(k.Verbs, verb) }

func (k Kind) groupVersion() groupVersion { return groupVersion{k.Group, k.Version} }

// validate reports why k cannot be served, wrapping ErrInvalidKind.
func (k Kind) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("openapi: kind %s/%s %s: %s: %w",
			k.Group, k.Version, k.Resource, fmt.Sprintf(format, args...), ErrInvalidKind)
	}
	switch {
	case k.Version == "" || k.Resource == "" || k.Kind == "":
		return bad("version, resource and kind are required")
	case k.Schema != nil:
		if k.ListKind == "" {
			return bad("a custom kind needs ListKind")
		}
		return nil
	case k.Type == nil || k.ListType == nil:
		return bad("Type and ListType are required")
	}
	for _, t := range []reflect.Type{k.Type, k.ListType} {
		if t.Kind() != reflect.Struct {
			return bad("type %v is not a struct", t)
		}
		if _, ok := reflect.New(t).Interface().(runtime.Object); !ok {
			return bad("type %v is not a runtime.Object", t)
		}
	}
	for _, v := range k.Verbs {
		if !isKnownVerb(v) {
			return bad("unknown verb %q", v)
		}
	}
	return nil
}

// groupVersion identifies one document.
type groupVersion struct{ group, version string }

// docPath is the document's key in the /openapi/v3 index: "api/v1" or
// "apis/apps/v1".
func (gv groupVersion) docPath() string {
	if gv.group == "" {
		return "api/" + gv.version
	}
	return "apis/" + gv.group + "/" + gv.version
}

// urlPrefix is the REST prefix of the group-version: "/api/v1" or
// "/apis/apps/v1".
func (gv groupVersion) urlPrefix() string { return "/" + gv.docPath() }

// validateKinds checks every kind and that no resource is served twice.
func validateKinds(kinds []Kind) error {
	seen := make(map[[3]string]bool, len(kinds))
	for _, k := range kinds {
		if err := k.validate(); err != nil {
			return err
		}
		key := [3]string{k.Group, k.Version, k.Resource}
		if seen[key] {
			return fmt.Errorf("openapi: %s/%s %s: %w", k.Group, k.Version, k.Resource, ErrDuplicateKind)
		}
		seen[key] = true
	}
	return nil
}

func (gv groupVersion) withKind(kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: gv.group, Version: gv.version, Kind: kind}
}

// groupVersions lists the group-versions of kinds in first-seen order.
func groupVersions(kinds []Kind) []groupVersion {
	var gvs []groupVersion
	for _, k := range kinds {
		if !slices.Contains(gvs, k.groupVersion()) {
			gvs = append(gvs, k.groupVersion())
		}
	}
	return gvs
}

// kindsOf selects the kinds of group-version gv.
func kindsOf(kinds []Kind, gv groupVersion) []Kind {
	var out []Kind
	for _, k := range kinds {
		if k.groupVersion() == gv {
			out = append(out, k)
		}
	}
	return out
}
