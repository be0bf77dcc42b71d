package api

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"

	"github.com/litek8s/litek8s/internal/api/discovery"
	"github.com/litek8s/litek8s/internal/api/golden"
	"github.com/litek8s/litek8s/internal/api/registry"
)

// readGolden returns a capture of internal/api/testdata/golden.
var readGolden = golden.Read

// unservedSubresources are the subresources kube announces that litek8s
// does not serve (yet): discovery must not announce them.
var unservedSubresources = map[string][]string{
	"v1/namespaces": {"finalize"},
}

// TestBuiltinDiscoveryGolden serves the aggregated discovery of the
// built-in registry and compares every resource with kube's: names,
// singular, scope, kind, verbs, short names, categories and
// subresources, as JSON.
func TestBuiltinDiscoveryGolden(t *testing.T) {
	var rows []discovery.Resource
	for _, r := range registry.Builtin() {
		rows = append(rows, discovery.Resource{Group: r.Group, Version: r.Version, Resource: r.Resource,
			Singular: r.Singular, Kind: r.Kind, Namespaced: r.Namespaced, ShortNames: r.ShortNames,
			Categories: r.Categories, Verbs: r.ServedVerbs(), Subresources: subresources(r)})
	}
	h, err := discovery.New(discovery.DefaultConfig(), rows)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	seen := 0
	for _, path := range []string{"/api", "/apis"} {
		golden := decodeDiscovery(t, readGolden(t, "discovery"+path+"-aggregated.json"))
		got := decodeDiscovery(t, getDiscovery(t, srv.URL+path))
		for _, g := range got.Items {
			for _, v := range g.Versions {
				for _, r := range v.Resources {
					seen++
					gv := v.Version
					if g.Name != "" {
						gv = g.Name + "/" + gv
					}
					want, ok := findResource(golden, g.Name, v.Version, r.Resource)
					if !ok {
						t.Errorf("%s %s: not served by kube", gv, r.Resource)
						continue
					}
					unserved := unservedSubresources[gv+"/"+r.Resource]
					want.Subresources = slices.DeleteFunc(want.Subresources, func(s apidiscoveryv2.APISubresourceDiscovery) bool {
						return slices.Contains(unserved, s.Subresource)
					})
					gb, _ := json.Marshal(r)
					wb, _ := json.Marshal(want)
					if string(gb) != string(wb) {
						t.Errorf("%s %s:\n got: %s\nwant: %s", gv, r.Resource, gb, wb)
					}
				}
			}
		}
	}
	if seen != len(rows) {
		t.Errorf("discovery shows %d resources, the registry has %d", seen, len(rows))
	}
}

func getDiscovery(t *testing.T, url string) []byte {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v %s", url, resp.StatusCode, err, b)
	}
	return b
}

func decodeDiscovery(t *testing.T, b []byte) apidiscoveryv2.APIGroupDiscoveryList {
	t.Helper()
	var l apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatal(err)
	}
	return l
}

func findResource(l apidiscoveryv2.APIGroupDiscoveryList, group, version, resource string) (apidiscoveryv2.APIResourceDiscovery, bool) {
	for _, g := range l.Items {
		for _, v := range g.Versions {
			for _, r := range v.Resources {
				if g.Name == group && v.Version == version && r.Resource == resource {
					return r, true
				}
			}
		}
	}
	return apidiscoveryv2.APIResourceDiscovery{}, false
}
