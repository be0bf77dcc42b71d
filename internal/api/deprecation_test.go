package api_test

import (
	"net/http"
	"testing"
)

// TestDeprecationWarning: every request on v1 Endpoints carries kube's one
// deprecation warning; other resources carry none.
func TestDeprecationWarning(t *testing.T) {
	s := newReadServer(t, nil)
	const want = `299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"`
	body := `{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"ep"}}`
	for _, c := range []struct{ method, target, body string }{
		{http.MethodPost, "/api/v1/namespaces/read/endpoints", body},
		{http.MethodGet, "/api/v1/namespaces/read/endpoints/ep", ""},
		{http.MethodGet, "/api/v1/namespaces/read/endpoints", ""},
		{http.MethodDelete, "/api/v1/namespaces/read/endpoints/ep", ""},
	} {
		code, h, b := s.do(t, c.method, c.target, "", c.body)
		if code >= 300 {
			t.Fatalf("%s %s: %d %s", c.method, c.target, code, b)
		}
		if got := h.Values("Warning"); len(got) != 1 || got[0] != want {
			t.Errorf("%s %s: Warning %q, want [%s]", c.method, c.target, got, want)
		}
	}
	if _, h, _ := s.do(t, http.MethodGet, "/api/v1/namespaces/read/configmaps", "", ""); len(h.Values("Warning")) != 0 {
		t.Errorf("configmaps list: Warning %q", h.Values("Warning"))
	}
}
