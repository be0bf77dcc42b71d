package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestCRDSelectableFields: a CRD version's selectableFields are field
// selectors on its custom resources (string, integer and boolean), for
// list, watch and deletecollection; other labels are a 400 worded as
// kube words it; a CRD with a bad selectable field is a 422.
func TestCRDSelectableFields(t *testing.T) {
	s := newReadServer(t, nil)
	const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	crd := func(fields string) string {
		return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gadgets.example.com"},` +
			`"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"gadgets","singular":"gadget","kind":"Gadget","listKind":"GadgetList"},` +
			`"versions":[{"name":"v1","served":true,"storage":true,"selectableFields":[` + fields + `],` +
			`"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{` +
			`"color":{"type":"string"},"size":{"type":"integer"},"shiny":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string"}}}}}}}}]}}`
	}
	for _, bad := range []struct{ fields, want string }{
		{`{"jsonPath":".spec.tags"}`, "must point to a field of type string, boolean or integer"},
		{`{"jsonPath":".spec.nope"}`, "is an invalid path: does not refer to a valid field"},
		{`{"jsonPath":".metadata.name"}`, "is an invalid path"},
		{`{"jsonPath":".spec.color"},{"jsonPath":".spec.color"}`, "Duplicate value"},
	} {
		code, _, b := s.do(t, http.MethodPost, crds, "", crd(bad.fields))
		if code != http.StatusUnprocessableEntity || !strings.Contains(string(b), bad.want) {
			t.Errorf("CRD with %s: %d %s", bad.fields, code, b)
		}
	}
	s.create(t, crds, crd(`{"jsonPath":".spec.color"},{"jsonPath":".spec.size"},{"jsonPath":".spec.shiny"}`))

	base := "/apis/example.com/v1/namespaces/read/gadgets"
	for _, g := range []string{
		`"metadata":{"name":"g1"},"spec":{"color":"red","size":1,"shiny":true}`,
		`"metadata":{"name":"g2"},"spec":{"color":"blue","size":2}`,
		`"metadata":{"name":"g3"},"spec":{"color":"red","size":2,"shiny":false}`,
		`"metadata":{"name":"g4"},"spec":{}`,
	} {
		code := 0
		var b []byte
		for range 50 { // the CRD's resources are served once the registry has it
			if code, _, b = s.do(t, http.MethodPost, base, "", `{"apiVersion":"example.com/v1","kind":"Gadget",`+g+`}`); code != http.StatusNotFound {
				break
			}
		}
		if code != http.StatusCreated {
			t.Fatalf("POST gadget: %d %s", code, b)
		}
	}
	names := func(selector string) string {
		t.Helper()
		code, _, b := s.do(t, http.MethodGet, base+"?fieldSelector="+url.QueryEscape(selector), "application/json", "")
		if code != http.StatusOK {
			return string(b)
		}
		var got []string
		for _, part := range strings.Split(string(b), `"name":"`)[1:] {
			if n := part[:strings.IndexByte(part, '"')]; strings.HasPrefix(n, "g") && len(n) == 2 {
				got = append(got, n)
			}
		}
		return strings.Join(got, ",")
	}
	for _, c := range []struct{ sel, want string }{
		{"spec.color=red", "g1,g3"},
		{"spec.color!=red", "g2,g4"},
		{"spec.size=2", "g2,g3"},
		{"spec.shiny=true", "g1"},
		{"spec.shiny=false", "g3"},
		{"spec.color=", "g4"},
		{"spec.color=red,spec.size=2", "g3"},
		{"metadata.name=g2", "g2"},
		{"metadata.namespace=read,spec.size=1", "g1"},
	} {
		if got := names(c.sel); got != c.want {
			t.Errorf("fieldSelector %s: got %s, want %s", c.sel, got, c.want)
		}
	}
	code, _, b := s.do(t, http.MethodGet, base+"?fieldSelector=spec.tags%3Dx", "", "")
	if code != http.StatusBadRequest || !strings.Contains(string(b), "field label not supported: spec.tags") {
		t.Errorf("unknown label: %d %s", code, b)
	}

	// A watch filtered on a selectable field sees only the matching objects.
	w := s.watch(t, base+"?watch=true&fieldSelector=spec.color%3Dblue", "")
	if ev := w.next(); ev.Type != "ADDED" || !strings.Contains(string(ev.Object), `"name":"g2"`) {
		t.Errorf("watch: first event %s %s", ev.Type, ev.Object)
	}
	s.create(t, base, `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g5"},"spec":{"color":"green"}}`)
	s.create(t, base, `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g6"},"spec":{"color":"blue"}}`)
	if ev := w.next(); ev.Type != "ADDED" || !strings.Contains(string(ev.Object), `"name":"g6"`) {
		t.Errorf("watch: next event %s %s", ev.Type, ev.Object)
	}

	// deletecollection by a selectable field.
	if code, _, b := s.do(t, http.MethodDelete, base+"?fieldSelector=spec.color%3Dred", "", ""); code != http.StatusOK {
		t.Fatalf("deletecollection: %d %s", code, b)
	}
	if got := names("metadata.namespace=read"); got != "g2,g4,g5,g6" {
		t.Errorf("after deleting the red gadgets: %s", got)
	}
}
