package openapi

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"k8s.io/kube-openapi/pkg/spec3"
)

// parsedDoc decodes a served document the way kubectl does, with
// kube-openapi's spec3 types.
func parsedDoc(t *testing.T, h *Handler, key string) *spec3.OpenAPI {
	t.Helper()
	doc, ok := mustDocs(t, h)[key]
	if !ok {
		t.Fatalf("no document %q", key)
	}
	var parsed spec3.OpenAPI
	if err := json.Unmarshal(doc.body, &parsed); err != nil {
		t.Fatalf("%s does not parse as OpenAPI v3: %v", key, err)
	}
	return &parsed
}

func paramNames(ps []*spec3.Parameter) []string {
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	return names
}

func TestDeploymentPaths(t *testing.T) {
	doc := parsedDoc(t, newServedHandler(t), "apis/apps/v1")
	if doc.Version != "3.0.0" || doc.Info == nil || doc.Info.Title != "Kubernetes" {
		t.Errorf("openapi %q info %+v", doc.Version, doc.Info)
	}
	coll := doc.Paths.Paths["/apis/apps/v1/namespaces/{namespace}/deployments"]
	item := doc.Paths.Paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]
	all := doc.Paths.Paths["/apis/apps/v1/deployments"]
	if coll == nil || item == nil || all == nil || doc.Paths.Paths["/apis/apps/v1/"] == nil {
		t.Fatalf("missing paths in %v", slices.Sorted(maps.Keys(doc.Paths.Paths)))
	}
	for _, tc := range []struct {
		name       string
		op         *spec3.Operation
		id, action string
		params     []string
	}{
		{"list", coll.Get, "listAppsV1NamespacedDeployment", "list", []string{"allowWatchBookmarks", "continue",
			"fieldSelector", "labelSelector", "limit", "resourceVersion", "resourceVersionMatch", "sendInitialEvents",
			"shardSelector", "timeoutSeconds", "watch"}},
		{"create", coll.Post, "createAppsV1NamespacedDeployment", "post", []string{"dryRun", "fieldManager", "fieldValidation"}},
		{"deletecollection", coll.Delete, "deleteAppsV1CollectionNamespacedDeployment", "deletecollection", nil},
		{"get", item.Get, "readAppsV1NamespacedDeployment", "get", nil},
		{"update", item.Put, "replaceAppsV1NamespacedDeployment", "put", []string{"dryRun", "fieldManager", "fieldValidation"}},
		{"patch", item.Patch, "patchAppsV1NamespacedDeployment", "patch", []string{"dryRun", "fieldManager", "fieldValidation", "force"}},
		{"delete", item.Delete, "deleteAppsV1NamespacedDeployment", "delete", []string{"dryRun", "gracePeriodSeconds",
			"ignoreStoreReadErrorWithClusterBreakingPotential", "orphanDependents", "propagationPolicy"}},
		{"list all namespaces", all.Get, "listAppsV1DeploymentForAllNamespaces", "list", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.op == nil {
				t.Fatal("operation missing")
			}
			if tc.op.OperationId != tc.id || tc.op.Extensions["x-kubernetes-action"] != tc.action {
				t.Errorf("id %q action %v, want %q %q", tc.op.OperationId, tc.op.Extensions["x-kubernetes-action"], tc.id, tc.action)
			}
			if gvk, _ := tc.op.Extensions["x-kubernetes-group-version-kind"].(map[string]any); gvk["kind"] != "Deployment" || gvk["group"] != "apps" {
				t.Errorf("gvk %v", tc.op.Extensions["x-kubernetes-group-version-kind"])
			}
			if tc.params != nil && !slices.Equal(paramNames(tc.op.Parameters), tc.params) {
				t.Errorf("params %v, want %v", paramNames(tc.op.Parameters), tc.params)
			}
		})
	}
	if got := paramNames(item.Parameters); !slices.Equal(got, []string{"name", "namespace", "pretty"}) {
		t.Errorf("item path parameters %v", got)
	}
	if got := paramNames(all.Parameters); !slices.Contains(got, "watch") || slices.Contains(got, "namespace") {
		t.Errorf("all-namespaces list takes its list parameters on the path and no namespace: %v", got)
	}
	if _, ok := item.Patch.RequestBody.Content["application/strategic-merge-patch+json"]; !ok {
		t.Errorf("patch content types %v lack strategic merge patch", slices.Sorted(maps.Keys(item.Patch.RequestBody.Content)))
	}
	if s := item.Put.RequestBody.Content["*/*"].Schema; s.Ref.String() != "#/components/schemas/io.k8s.api.apps.v1.Deployment" {
		t.Errorf("put body %v", s.Ref.String())
	}
}

func TestClusterScopedAndVerbs(t *testing.T) {
	nodes := servedKind(t, "nodes")
	nodes.Verbs = []string{"get", "list"}
	h := newServedHandlerFor(t, []Kind{nodes, widgetKind()})
	core := parsedDoc(t, h, "api/v1")
	if p := core.Paths.Paths["/api/v1/nodes"]; p == nil || p.Get == nil || p.Post != nil || p.Delete != nil {
		t.Errorf("/api/v1/nodes: want list only, got %+v", p)
	}
	if p := core.Paths.Paths["/api/v1/nodes/{name}"]; p == nil || p.Get == nil || p.Put != nil || p.Patch != nil {
		t.Errorf("/api/v1/nodes/{name}: want get only, got %+v", p)
	}
	if got := core.Paths.Paths["/api/v1/nodes/{name}"].Parameters; !slices.Equal(paramNames(got), []string{"name", "pretty"}) {
		t.Errorf("cluster-scoped item parameters %v", paramNames(got))
	}
	custom := parsedDoc(t, h, "apis/golden.example.com/v1")
	if op := custom.Paths.Paths["/apis/golden.example.com/v1/namespaces/{namespace}/widgets"].Get; op == nil ||
		op.OperationId != "listGoldenExampleComV1NamespacedWidget" || op.Tags[0] != "goldenExampleCom_v1" {
		t.Errorf("custom group naming: %+v", op)
	}
}
