package openapi

import (
	"maps"
	"net/http"
	"slices"
	"strings"

	"k8s.io/kube-openapi/pkg/spec3"
)

// kindRefs are the references a kind's operations use.
type kindRefs struct {
	object, list, deleteOptions, status, patch string
}

// kindPaths returns the REST paths of kind k: the collection and item paths
// (under /namespaces/{namespace} for namespaced kinds) and, for a
// namespaced kind that can be listed, the all-namespaces list.
func kindPaths(k Kind, refs kindRefs) map[string]*spec3.Path {
	base := k.groupVersion().urlPrefix() + "/"
	scope, collection := "", base+k.Resource
	var common []*spec3.Parameter
	if k.Namespaced {
		scope, collection = "Namespaced", base+"namespaces/{namespace}/"+k.Resource
		common = append(common, pathParam("namespace", "object name and auth scope, such as for teams and projects"))
	}
	common = append(common, prettyParam())
	paths := make(map[string]*spec3.Path)
	addPath(paths, collection, common, collectionOps(k, refs, scope))
	item := append([]*spec3.Parameter{pathParam("name", "name of the "+k.Kind)}, common...)
	addPath(paths, collection+"/{name}", item, itemOps(k, refs, scope))
	if k.Namespaced && k.has("list") {
		list := listOp(k, refs, "list"+operationPrefix(k.groupVersion())+k.Kind+"ForAllNamespaces")
		addPath(paths, base+k.Resource, []*spec3.Parameter{prettyParam()}, map[string]*spec3.Operation{http.MethodGet: list})
	}
	return paths
}

// collectionOps are list (GET), create (POST) and deletecollection
// (DELETE), as far as k's verbs allow.
func collectionOps(k Kind, refs kindRefs, scope string) map[string]*spec3.Operation {
	prefix := operationPrefix(k.groupVersion())
	ops := make(map[string]*spec3.Operation)
	if k.has("list") {
		ops[http.MethodGet] = listOp(k, refs, "list"+prefix+scope+k.Kind)
	}
	if k.has("create") {
		ops[http.MethodPost] = kubeOperation(k, "post", "create"+prefix+scope+k.Kind, "create "+withArticle(k.Kind),
			createParams(), requestBody(refs.object, []string{"*/*"}, true),
			responses(refs.object, objectMediaTypes(), http.StatusOK, http.StatusCreated, http.StatusAccepted))
	}
	if k.has("deletecollection") {
		ops[http.MethodDelete] = kubeOperation(k, "deletecollection", "delete"+prefix+"Collection"+scope+k.Kind,
			"delete collection of "+k.Kind, deleteCollectionParams(),
			requestBody(refs.deleteOptions, []string{"*/*"}, false),
			responses(refs.status, objectMediaTypes(), http.StatusOK))
	}
	return ops
}

func listOp(k Kind, refs kindRefs, id string) *spec3.Operation {
	return kubeOperation(k, "list", id, "list or watch objects of kind "+k.Kind, listParams(), nil,
		responses(refs.list, listMediaTypes(), http.StatusOK))
}

// itemOps are get, update (PUT), delete and patch on one object.
func itemOps(k Kind, refs kindRefs, scope string) map[string]*spec3.Operation {
	name := operationPrefix(k.groupVersion()) + scope + k.Kind
	ops := make(map[string]*spec3.Operation)
	if k.has("get") {
		ops[http.MethodGet] = kubeOperation(k, "get", "read"+name, "read the specified "+k.Kind, nil, nil,
			responses(refs.object, objectMediaTypes(), http.StatusOK))
	}
	if k.has("update") {
		ops[http.MethodPut] = kubeOperation(k, "put", "replace"+name, "replace the specified "+k.Kind,
			updateParams(), requestBody(refs.object, []string{"*/*"}, true),
			responses(refs.object, objectMediaTypes(), http.StatusOK, http.StatusCreated))
	}
	if k.has("delete") {
		ops[http.MethodDelete] = kubeOperation(k, "delete", "delete"+name, "delete "+withArticle(k.Kind),
			deleteParams(), requestBody(refs.deleteOptions, []string{"*/*"}, false),
			responses(refs.status, objectMediaTypes(), http.StatusOK, http.StatusAccepted))
	}
	if k.has("patch") {
		ops[http.MethodPatch] = kubeOperation(k, "patch", "patch"+name, "partially update the specified "+k.Kind,
			patchParams(), requestBody(refs.patch, patchMediaTypes(), true),
			responses(refs.object, objectMediaTypes(), http.StatusOK, http.StatusCreated))
	}
	return ops
}

// addPath adds a path with ops, each of which also takes the common
// parameters. Parameters every operation takes are listed once on the
// path, the rest on their operation, each list sorted by name: kube's
// layout. A path without operations is not added.
func addPath(paths map[string]*spec3.Path, url string, common []*spec3.Parameter, ops map[string]*spec3.Operation) {
	if len(ops) == 0 {
		return
	}
	shared := sharedParams(ops, common)
	p := &spec3.Path{PathProps: spec3.PathProps{Parameters: shared}}
	for method, op := range ops {
		op.Parameters = unshared(op.Parameters, shared)
		sortParams(op.Parameters)
		setOperation(p, method, op)
	}
	sortParams(p.Parameters)
	paths[url] = p
}

// sharedParams are the common parameters plus those every op takes.
func sharedParams(ops map[string]*spec3.Operation, common []*spec3.Parameter) []*spec3.Parameter {
	count := make(map[string]int)
	for _, op := range ops {
		for _, p := range op.Parameters {
			count[p.Name]++
		}
	}
	shared := append([]*spec3.Parameter(nil), common...)
	some := ops[slices.Sorted(maps.Keys(ops))[0]] // a shared parameter is in every op
	for _, p := range some.Parameters {
		if count[p.Name] == len(ops) {
			shared = append(shared, p)
		}
	}
	return shared
}

// unshared returns ps without the parameters named in shared.
func unshared(ps, shared []*spec3.Parameter) []*spec3.Parameter {
	var out []*spec3.Parameter
	for _, p := range ps {
		if !containsParam(shared, p.Name) {
			out = append(out, p)
		}
	}
	return out
}

func containsParam(ps []*spec3.Parameter, name string) bool {
	for _, p := range ps {
		if p.Name == name {
			return true
		}
	}
	return false
}

func setOperation(p *spec3.Path, method string, op *spec3.Operation) {
	switch method {
	case http.MethodGet:
		p.Get = op
	case http.MethodPut:
		p.Put = op
	case http.MethodPost:
		p.Post = op
	case http.MethodDelete:
		p.Delete = op
	case http.MethodPatch:
		p.Patch = op
	}
}

// withArticle prefixes a kind with "a" or "an", as kube's descriptions do.
func withArticle(kind string) string {
	if kind != "" && strings.ContainsRune("AEIOU", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}
