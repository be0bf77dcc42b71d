package discovery

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLegacyIdentical covers the legacy documents whose golden answer
// describes exactly what we serve: they must be byte-identical.
func TestLegacyIdentical(t *testing.T) {
	srv := newTestServer(t, goldenConfig())
	for _, name := range []string{
		"discovery/api",
		"discovery/apis-apps",
		"discovery/apis-coordination.k8s.io-v1",
	} {
		t.Run(name, func(t *testing.T) {
			g := readGolden(t, name, "json")
			resp, body := g.do(t, srv)
			checkHeaders(t, g, resp)
			if !bytes.Equal(body, g.body) {
				t.Errorf("body:\n got %s\nwant %s", body, g.body)
			}
			if got, want := resp.Header.Get("Content-Length"), g.respHeader.Get("Content-Length"); got != want {
				t.Errorf("Content-Length = %q, golden %q", got, want)
			}
		})
	}
}

// TestResourceLists compares each of our APIResourceList entries with the
// golden entry of the same name (pods/status, deployments/scale, ...).
func TestResourceLists(t *testing.T) {
	srv := newTestServer(t, goldenConfig())
	tests := []struct {
		golden string
		names  []string
	}{
		{"discovery/api-v1", []string{"configmaps", "namespaces", "pods", "pods/status"}},
		{"discovery/apis-apps-v1", []string{"deployments", "deployments/scale", "deployments/status"}},
		{"discovery/apis-coordination.k8s.io-v1", []string{"leases"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			g := readGolden(t, tt.golden, "json")
			resp, body := g.do(t, srv)
			checkHeaders(t, g, resp)
			checkFraming(t, body)
			checkPrefix(t, body, g.body, `"resources":[{"name":`)
			got, want := decodeResourceList(t, body), decodeResourceList(t, g.body)
			var names []string
			for _, r := range got.APIResources {
				names = append(names, r.Name)
				compareJSON(t, r.Name, r, findResource(want, r.Name))
			}
			if !slices.Equal(names, tt.names) {
				t.Errorf("resources = %q, want %q", names, tt.names)
			}
		})
	}
}

func decodeResourceList(t *testing.T, body []byte) metav1.APIResourceList {
	t.Helper()
	var list metav1.APIResourceList
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatalf("decode APIResourceList: %v", err)
	}
	return list
}

func findResource(list metav1.APIResourceList, name string) *metav1.APIResource {
	for _, r := range list.APIResources {
		if r.Name == name {
			return &r
		}
	}
	return nil
}

// TestGroupList compares our APIGroupList entries with the golden ones.
func TestGroupList(t *testing.T) {
	srv := newTestServer(t, goldenConfig())
	g := readGolden(t, "discovery/apis", "json")
	resp, body := g.do(t, srv)
	checkHeaders(t, g, resp)
	checkFraming(t, body)
	checkPrefix(t, body, g.body, `"groups":[{"name":`)
	var got, want metav1.APIGroupList
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(g.body, &want); err != nil {
		t.Fatal(err)
	}
	var names, golden []string
	for _, w := range want.Groups {
		golden = append(golden, w.Name)
	}
	for _, gr := range got.Groups {
		names = append(names, gr.Name)
		for _, w := range want.Groups {
			if w.Name == gr.Name {
				compareJSON(t, gr.Name, gr, w)
			}
		}
	}
	if !slices.Equal(names, []string{"apps", "coordination.k8s.io"}) {
		t.Errorf("groups = %q", names)
	}
	checkGroupOrder(t, names, golden)
}

// TestLegacyAccept: Accept headers that get the legacy JSON documents on
// every route, including kubectl's and controllers' protobuf-first header
// (we answer JSON, as kube-apiserver does for custom resources).
func TestLegacyAccept(t *testing.T) {
	srv := newTestServer(t, goldenConfig())
	paths := []string{"/api", "/apis", "/apis/apps", "/api/v1", "/apis/apps/v1"}
	want := make(map[string][]byte)
	for _, path := range paths {
		_, want[path] = get(t, srv, path, "application/json")
	}
	for _, accept := range []string{
		"",
		"*/*",
		"application/json, */*",
		"application/vnd.kubernetes.protobuf,application/json",
		"application/json;q=0.5,application/xml",
		"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0,application/json",
	} {
		t.Run(accept, func(t *testing.T) {
			for _, path := range paths {
				resp, body := get(t, srv, path, accept)
				if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
					t.Fatalf("%s: %d %q", path, resp.StatusCode, resp.Header.Get("Content-Type"))
				}
				if !bytes.Equal(body, want[path]) {
					t.Errorf("%s: body %s", path, body)
				}
			}
		})
	}
}

// TestServerAddressFromHost: without a configured address, /api names the
// Host the request was sent to.
func TestServerAddressFromHost(t *testing.T) {
	cfg := DefaultConfig()
	srv := newTestServer(t, cfg)
	_, body := get(t, srv, "/api", "application/json")
	var got metav1.APIVersions
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	host := srv.Listener.Addr().String()
	if len(got.ServerAddressByClientCIDRs) != 1 || got.ServerAddressByClientCIDRs[0].ServerAddress != host ||
		got.ServerAddressByClientCIDRs[0].ClientCIDR != "0.0.0.0/0" {
		t.Errorf("serverAddressByClientCIDRs = %+v, want %s", got.ServerAddressByClientCIDRs, host)
	}
	checkFraming(t, body)
}
