package discovery

import (
	"bytes"
	"net/http"
	"testing"
)

func TestNotFound(t *testing.T) {
	srv := newTestServer(t, goldenConfig())
	g := readGolden(t, "errors/404-unknown-group", "txt")
	for _, path := range []string{
		g.target, // /apis/nope.example.com/v1
		"/apis/nope.example.com",
		"/apis/apps/v2",
		"/apis/coordination.k8s.io/v1beta1",
		"/api/v2",
		"/apis/apps%2Fv1",
	} {
		for _, accept := range []string{"application/json", "application/xml", ""} {
			t.Run(path+" "+accept, func(t *testing.T) {
				resp, body := get(t, srv, path, accept)
				checkHeaders(t, g, resp)
				if !bytes.Equal(body, g.body) {
					t.Errorf("body = %q, golden %q", body, g.body)
				}
			})
		}
	}
}

func TestNotAcceptable(t *testing.T) {
	srv := newTestServer(t, goldenConfig())
	// go-restful's 406, on the routes kube-apiserver serves through go-restful.
	route := readGolden(t, "errors/406-accept-xml", "json")
	// Content negotiation's 406.
	negotiation := readGolden(t, "discovery/apis-aggregated-v2beta1-only", "json")
	v2beta1 := negotiation.reqHeader.Get("Accept")
	tests := []struct {
		path, accept string
		want         golden
	}{
		{negotiation.target, v2beta1, negotiation}, // the capture itself: /apis
		{"/api", v2beta1, negotiation},
		{"/apis/apps", v2beta1, negotiation},
		{"/api/v1", v2beta1, negotiation},
		{"/apis/apps/v1", v2beta1, negotiation},
		{"/api/v1", route.reqHeader.Get("Accept"), route}, // application/xml
		{"/apis/apps/v1", "application/xml", route},
		{"/api", "application/xml", route},
		{"/api", "application/*", route}, // go-restful matches no type wildcard
		{"/apis", "application/xml", negotiation},
		{"/apis/apps", "application/xml", negotiation},
		{"/apis/apps", "application/yaml", negotiation}, // litek8s serves only JSON
		{"/apis/apps", "application/json;q=0,*/*", negotiation},
		{"/apis/apps", "application/json;stream=bogus", negotiation},
		{"/apis/apps", "application/json;sv=v1", negotiation},
		{"/apis/apps", "application/json;as=Table;v=v1;g=meta.k8s.io", negotiation},
	}
	for _, tt := range tests {
		t.Run(tt.path+" "+tt.accept, func(t *testing.T) {
			resp, body := get(t, srv, tt.path, tt.accept)
			checkHeaders(t, tt.want, resp)
			if !bytes.Equal(body, tt.want.body) {
				t.Errorf("body:\n%s\ngolden:\n%s", body, tt.want.body)
			}
			if got, want := resp.Header.Get("Content-Length"), tt.want.respHeader.Get("Content-Length"); got != want {
				t.Errorf("Content-Length = %q, golden %q", got, want)
			}
		})
	}
}

// TestAggregatedAccept: which Accept headers get aggregated discovery.
func TestAggregatedAccept(t *testing.T) {
	srv := newTestServer(t, goldenConfig())
	const v2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	tests := []struct {
		accept     string
		aggregated bool
	}{
		{v2, true},
		{"application/json," + v2, true}, // plain JSON is never an aggregated answer
		{v2 + ";profile=nopeer," + v2 + ",application/json", true}, // client-go 0.37 with NoPeerDiscovery
		{"application/json;as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io", true},
		{"*/*;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", true},
		{v2 + ";q=0,application/json", false},
		{"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;sv=v1,application/json", false},
		{"application/json", false},
		{"", false},
	}
	for _, tt := range tests {
		for _, path := range []string{"/api", "/apis"} {
			t.Run(path+" "+tt.accept, func(t *testing.T) {
				resp, _ := get(t, srv, path, tt.accept)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d", resp.StatusCode)
				}
				got := resp.Header.Get("Content-Type") == aggregatedContentType
				if got != tt.aggregated {
					t.Errorf("aggregated = %v (Content-Type %q), want %v", got, resp.Header.Get("Content-Type"), tt.aggregated)
				}
			})
		}
	}
}
