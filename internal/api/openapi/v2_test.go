package openapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	openapiproto "k8s.io/kube-openapi/pkg/util/proto"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

func getV2(t *testing.T, h *Handler, accept string) *httptest.ResponseRecorder {
	t.Helper()
	mux := http.NewServeMux()
	h.Register(mux)
	req := httptest.NewRequest(http.MethodGet, "/openapi/v2", nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	return rec
}

// The v2 document is Swagger 2.0 converted from the v3 schemas: v2
// references, no allOf wrappers, body parameters, and the kinds' group-
// version-kind extensions, which is what clients look definitions up by.
func TestV2Document(t *testing.T) {
	h := newServedHandlerFor(t, servedKinds())
	rec := getV2(t, h, "application/json")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET /openapi/v2: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	body := rec.Body.String()
	for _, bad := range []string{"#/components/schemas/", `"allOf"`, `"oneOf"`, `"requestBody"`, `"nullable"`} {
		if strings.Contains(body, bad) {
			t.Errorf("v2 document contains %s", bad)
		}
	}
	var sw spec.Swagger
	if err := json.Unmarshal(rec.Body.Bytes(), &sw); err != nil {
		t.Fatal(err)
	}
	if sw.Swagger != "2.0" {
		t.Errorf("swagger %q", sw.Swagger)
	}
	pod, ok := sw.Definitions["io.k8s.api.core.v1.Pod"]
	if !ok {
		t.Fatal("no io.k8s.api.core.v1.Pod definition")
	}
	podSpec := pod.Properties["spec"]
	if ref := podSpec.Ref.String(); ref != "#/definitions/io.k8s.api.core.v1.PodSpec" {
		t.Errorf("Pod.spec $ref %q", ref)
	}
	if pod.Properties["spec"].Description == "" {
		t.Error("Pod.spec lost its description")
	}
	if gvk := pod.Extensions["x-kubernetes-group-version-kind"]; gvk == nil {
		t.Error("Pod has no x-kubernetes-group-version-kind")
	}
	if ios := sw.Definitions["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]; !slices.Equal(ios.Type, []string{"string"}) ||
		ios.Format != "int-or-string" {
		t.Errorf("IntOrString is %v %q, want string int-or-string", ios.Type, ios.Format)
	}
	create := sw.Paths.Paths["/api/v1/namespaces/{namespace}/configmaps"].Post
	if create == nil {
		t.Fatal("no POST configmaps")
	}
	var body0 *spec.Parameter
	for i, p := range create.Parameters {
		if p.In == "body" {
			body0 = &create.Parameters[i]
		}
	}
	if body0 == nil || body0.Schema.Ref.String() != "#/definitions/io.k8s.api.core.v1.ConfigMap" || !body0.Required {
		t.Errorf("POST configmaps body parameter %+v", body0)
	}
	if !slices.Contains(create.Produces, "application/json") || !slices.Contains(create.Consumes, "*/*") {
		t.Errorf("POST configmaps produces %v consumes %v", create.Produces, create.Consumes)
	}

	// kubectl's OpenAPI v2 model parser accepts it.
	doc, err := openapi_v2.ParseDocument(rec.Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	models, err := openapiproto.NewOpenAPIData(doc)
	if err != nil {
		t.Fatalf("kube-openapi cannot read the v2 document: %v", err)
	}
	if models.LookupModel("io.k8s.api.apps.v1.Deployment") == nil {
		t.Error("no Deployment model")
	}
}

// Protobuf for the Accept client-go's discovery sends, JSON for JSON or
// anything, 406 for anything else.
func TestV2Negotiation(t *testing.T) {
	h := newServedHandlerFor(t, servedKinds())
	for _, c := range []struct{ accept, want string }{
		{"", "application/json"},
		{"*/*", "application/json"},
		{"application/com.github.proto-openapi.spec.v2@v1.0+protobuf", v2Protobuf},
		{"application/com.github.proto-openapi.spec.v2.v1.0+protobuf, application/json", v2Protobuf},
		{"application/json, application/com.github.proto-openapi.spec.v2@v1.0+protobuf", "application/json"},
		{"application/xml", ""},
	} {
		rec := getV2(t, h, c.accept)
		if c.want == "" {
			if rec.Code != http.StatusNotAcceptable {
				t.Errorf("Accept %q: %d, want 406", c.accept, rec.Code)
			}
			continue
		}
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != c.want {
			t.Errorf("Accept %q: %d %q, want %q", c.accept, rec.Code, rec.Header().Get("Content-Type"), c.want)
			continue
		}
		if c.want == v2Protobuf {
			var doc openapi_v2.Document
			if err := proto.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
				t.Fatalf("protobuf v2: %v", err)
			}
			if doc.Swagger != "2.0" || doc.Definitions == nil {
				t.Errorf("protobuf v2 document: swagger %q", doc.Swagger)
			}
		}
	}
	rec := getV2(t, h, "")
	if _, err := io.ReadAll(rec.Body); err != nil || rec.Header().Get("Etag") == "" {
		t.Errorf("no Etag on /openapi/v2")
	}
}

// kubectl explain --output=plaintext-openapiv2 reads /openapi/v2.
func TestKubectlExplainV2(t *testing.T) {
	kinds := servedKinds()
	srv := newFakeAPIServer(t, newServedHandlerFor(t, kinds), kinds)
	k := newKubectl(t, srv.URL)
	for _, tc := range []struct {
		field string
		want  []string
	}{
		{"deployment.spec.strategy", []string{"RESOURCE: strategy <Object>", "rollingUpdate", "type"}},
		{"pods.spec.containers.ports", []string{"containerPort", "<integer>"}},
		{"configmap", []string{"KIND:     ConfigMap", "data\t<map[string]string>"}},
	} {
		t.Run(tc.field, func(t *testing.T) {
			out := mustRun(t, k, "explain", tc.field, "--output=plaintext-openapiv2")
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("kubectl explain %s: missing %q in:\n%s", tc.field, want, out)
				}
			}
		})
	}
	if paths := srv.paths(); !slices.Contains(paths, "GET /openapi/v2") {
		t.Errorf("kubectl did not read /openapi/v2: %v", paths)
	}
}
