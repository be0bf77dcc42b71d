package member_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// A CRD is served on the member as soon as it is created; its custom
// resources are stored and served like kube's apiextensions server does
// (keys sorted, status dropped on create with the status subresource,
// printer columns in Tables, items with kind/apiVersion in lists).
func TestConformanceCRD(t *testing.T) {
	g := newGoldenClient(t, nil)
	g.setup(t, exchange{golden: "objects/namespace-post.json"})
	// kube answers the POST with status.conditions null and sets them a
	// moment later; litek8s establishes a CRD at once (compare with the GET).
	g.run(t, exchange{golden: "objects/crd-post.json"}, cmpOpts{drop: []string{"status.conditions", "status.acceptedNames", "status.storedVersions"}})
	// kube-apiserver's CRD controllers wrote the conditions through /status
	// (managedFields entry 1); litek8s sets them on create.
	g.run(t, exchange{golden: "objects/crd-get.json"}, cmpOpts{drop: []string{"status.conditions.*.lastTransitionTime",
		"metadata.managedFields.1"}})
	g.run(t, exchange{golden: "objects/widget-post.json"}, cmpOpts{})
	g.run(t, exchange{golden: "objects/widget-patch-status.json"}, cmpOpts{})
	g.run(t, exchange{golden: "objects/widget-get.json"}, cmpOpts{})
	g.run(t, exchange{golden: "objects/widget-table.json"}, cmpOpts{})
	g.run(t, exchange{golden: "lists/widgets-list.json"}, cmpOpts{})
	g.run(t, exchange{golden: "tables/widgets-table-includeObject-Object.json"}, cmpOpts{})
	g.run(t, exchange{golden: "errors/404-get-missing-widget.json"}, cmpOpts{})
	g.run(t, exchange{golden: "delete/widget-delete.json"}, cmpOpts{})
}

// A CRD with two served versions (conversion None) serves every object
// through both, each answer with the requested apiVersion; the schema of
// the version written through prunes unknown fields and applies defaults;
// deleting the CRD deletes its objects.
func TestCRDVersionsSchemaAndDeletion(t *testing.T) {
	g := newGoldenClient(t, nil)
	g.setup(t, exchange{golden: "objects/namespace-post.json"})
	const crd = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
	 "metadata":{"name":"gadgets.example.com"},
	 "spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"gadgets","kind":"Gadget"},
	  "versions":[
	   {"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{
	     "spec":{"type":"object","properties":{"size":{"type":"integer","default":5,"maximum":10},"color":{"type":"string"}}}}}}},
	   {"name":"v2","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`
	g.mustDo(t, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
	base := "/apis/example.com/%s/namespaces/golden/gadgets"
	created := string(g.mustDo(t, "POST", fmt.Sprintf(base, "v1"),
		`{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g1"},"spec":{"color":"red","junk":true}}`))
	if !strings.Contains(created, `"spec":{"color":"red","size":5}`) {
		t.Errorf("v1 create: want junk pruned and size defaulted, got %s", created)
	}
	for _, v := range []string{"v1", "v2"} {
		got := string(g.mustDo(t, "GET", fmt.Sprintf(base, v)+"/g1", ""))
		if !strings.HasPrefix(got, `{"apiVersion":"example.com/`+v+`","kind":"Gadget",`) {
			t.Errorf("GET through %s: %s", v, got)
		}
		list := string(g.mustDo(t, "GET", fmt.Sprintf(base, v), ""))
		if !strings.Contains(list, `"items":[{"apiVersion":"example.com/`+v+`"`) {
			t.Errorf("LIST through %s: %s", v, list)
		}
	}
	if code, b := g.do(t, "POST", fmt.Sprintf(base, "v1"),
		`{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g2"},"spec":{"size":11}}`); code != 422 ||
		!strings.Contains(string(b), `"reason":"Invalid"`) || !strings.Contains(string(b), "spec.size") {
		t.Errorf("schema violation: want 422 Invalid on spec.size, got %d %s", code, b)
	}
	g.mustDo(t, "DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com", "")
	if code, _ := g.do(t, "GET", fmt.Sprintf(base, "v1")+"/g1", ""); code != 404 {
		t.Errorf("after the CRD is deleted its objects must be gone: GET answered %d", code)
	}
	g.mustDo(t, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
	if list := string(g.mustDo(t, "GET", fmt.Sprintf(base, "v1"), "")); strings.Contains(list, `"name":"g1"`) {
		t.Errorf("a re-created CRD must start empty: %s", list)
	}
}

// A default added to a CRD's schema shows on objects stored before it, on
// GET, LIST and WATCH (kube defaults what it reads from storage), and is
// not stored: removing it again removes it from what is served (e2e's
// "custom resource defaulting for requests and from storage works").
func TestCRDDefaultsOnRead(t *testing.T) {
	g := newGoldenClient(t, nil)
	g.setup(t, exchange{golden: "objects/namespace-post.json"})
	crd := func(def string) string {
		return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
	 "metadata":{"name":"dials.example.com"},
	 "spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"dials","kind":"Dial"},
	  "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{
	     "a":{"type":"string"` + def + `},"n":{"type":"integer"}}}}}]}}`
	}
	g.mustDo(t, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd(""))
	const base = "/apis/example.com/v1/namespaces/golden/dials"
	if got := string(g.mustDo(t, "POST", base, `{"apiVersion":"example.com/v1","kind":"Dial","metadata":{"name":"d1"},"n":9007199254740993}`)); strings.Contains(got, `"a":`) {
		t.Fatalf("created without a default: %s", got)
	}
	g.mustDo(t, "PATCH", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/dials.example.com",
		`{"spec":{"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"a":{"type":"string","default":"A"},"n":{"type":"integer"}}}}}]}}`)
	want := `{"a":"A","apiVersion":"example.com/v1","kind":"Dial","metadata":{`
	for _, path := range []string{base + "/d1", base, base + "?watch=1&timeoutSeconds=1"} {
		var got string
		membertest.Eventually(t, 10*time.Second, func() error { // the CRD's new schema is served soon after the write
			got = string(g.mustDo(t, "GET", path, ""))
			if !strings.Contains(got, want) {
				return fmt.Errorf("GET %s: %s, want the default", path, got)
			}
			return nil
		})
		if !strings.Contains(got, `"n":9007199254740993`) {
			t.Fatalf("GET %s: a number changed: %s", path, got)
		}
	}
	g.mustDo(t, "PATCH", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/dials.example.com",
		`{"spec":{"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"a":{"type":"string"},"n":{"type":"integer"}}}}}]}}`)
	membertest.Eventually(t, 10*time.Second, func() error {
		if got := string(g.mustDo(t, "GET", base+"/d1", "")); strings.Contains(got, `"a":`) {
			return fmt.Errorf("the default was stored: %s", got)
		}
		return nil
	})
}

// Server-side apply of a custom resource with a field its schema does not
// declare fails as kube's typed conversion does (whatever fieldValidation
// says), and stores nothing (e2e FieldValidation "should create/apply an
// invalid CR with extra properties").
func TestCRDApplyUndeclaredField(t *testing.T) {
	g := newGoldenClient(t, nil)
	g.setup(t, exchange{golden: "objects/namespace-post.json"})
	g.mustDo(t, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
	 "metadata":{"name":"knobs.example.com"},
	 "spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"knobs","kind":"Knob"},
	  "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{
	     "spec":{"type":"object","properties":{"size":{"type":"integer"}}},
	     "free":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}]}}`)
	const target = "/apis/example.com/v1/namespaces/golden/knobs/k1?fieldManager=m&fieldValidation="
	apply := func(v, body string) (int, string) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPatch, g.base+target+v, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+g.token)
		req.Header.Set("Content-Type", "application/apply-patch+yaml")
		resp, err := g.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, v := range []string{"Strict", "Ignore"} {
		code, b := apply(v, "apiVersion: example.com/v1\nkind: Knob\nmetadata:\n  name: k1\nunknownField: x\nspec:\n  size: 1\n  bar: 2\n")
		if code != 500 || !strings.Contains(b, `failed to create typed patch object (/k1; example.com/v1, Kind=Knob): errors:\n  .`) ||
			!strings.Contains(b, `.unknownField: field not declared in schema`) || !strings.Contains(b, `.spec.bar: field not declared in schema`) {
			t.Fatalf("fieldValidation=%s: %d %s", v, code, b)
		}
	}
	if code, b := g.do(t, "GET", "/apis/example.com/v1/namespaces/golden/knobs/k1", ""); code != 404 {
		t.Fatalf("a refused apply stored: %d %s", code, b)
	}
	if code, b := apply("Strict", "apiVersion: example.com/v1\nkind: Knob\nmetadata:\n  name: k1\nspec:\n  size: 1\nfree:\n  any: 1\n"); code != 201 {
		t.Fatalf("declared and preserved fields: %d %s", code, b)
	}
}
