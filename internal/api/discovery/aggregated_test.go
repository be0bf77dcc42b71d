package discovery

import (
	"bytes"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
)

func TestAggregated(t *testing.T) {
	srv := newTestServer(t, goldenConfig())
	tests := []struct {
		golden string
		groups []string // the groups we serve on that path, in order
	}{
		{"discovery/api-aggregated", []string{""}},
		{"discovery/api-aggregated-v2-only", []string{""}},
		{"discovery/apis-aggregated", []string{"apps", "coordination.k8s.io"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			g := readGolden(t, tt.golden, "json")
			resp, body := g.do(t, srv)
			checkHeaders(t, g, resp)
			checkFraming(t, body)
			checkEtag(t, resp.Header.Get("Etag"), body)
			got, want := decodeAggregated(t, body), decodeAggregated(t, g.body)
			if names := groupNames(got); !slices.Equal(names, tt.groups) {
				t.Errorf("groups = %q, want %q", names, tt.groups)
			}
			checkGroupOrder(t, groupNames(got), groupNames(want))
			compareAggregated(t, got, want)
			checkPrefix(t, body, g.body, `"items":[{"metadata":`)
		})
	}
}

// checkEtag checks that etag is the quoted upper-case SHA-512 of the body
// without kind and apiVersion, as kube-apiserver computes it.
func checkEtag(t *testing.T, etag string, body []byte) {
	t.Helper()
	const head = `{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2",`
	if !bytes.HasPrefix(body, []byte(head)) {
		t.Fatalf("body starts with %.80q", body)
	}
	hashed := append([]byte("{"), bytes.TrimSuffix(body[len(head):], []byte("\n"))...)
	sum := sha512.Sum512(hashed)
	if want := strconv.Quote(strings.ToUpper(hex.EncodeToString(sum[:]))); etag != want {
		t.Errorf("Etag = %s, want %s", etag, want)
	}
}

func decodeAggregated(t *testing.T, body []byte) apidiscoveryv2.APIGroupDiscoveryList {
	t.Helper()
	var list apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatalf("decode APIGroupDiscoveryList: %v", err)
	}
	return list
}

func groupNames(list apidiscoveryv2.APIGroupDiscoveryList) []string {
	var names []string
	for _, g := range list.Items {
		names = append(names, g.Name)
	}
	return names
}

// checkGroupOrder checks that our groups come in the golden's order.
func checkGroupOrder(t *testing.T, got, golden []string) {
	t.Helper()
	last := -1
	for _, name := range got {
		i := slices.Index(golden, name)
		if i < 0 {
			t.Errorf("group %q not in the golden list", name)
			continue
		}
		if i < last {
			t.Errorf("group %q out of the golden order %q", name, golden)
		}
		last = i
	}
}

// compareAggregated compares each of our resources, as JSON, with the golden
// resource of the same group, version and name, keeping only the golden
// subresources we serve.
func compareAggregated(t *testing.T, got, golden apidiscoveryv2.APIGroupDiscoveryList) {
	t.Helper()
	for _, g := range got.Items {
		for _, v := range g.Versions {
			gv := g.Name + "/" + v.Version
			if v.Freshness != apidiscoveryv2.DiscoveryFreshnessCurrent {
				t.Errorf("%s: freshness %q", gv, v.Freshness)
			}
			for _, r := range v.Resources {
				want, ok := findAggregated(golden, g.Name, v.Version, r.Resource)
				if !ok {
					t.Errorf("%s %s: not in golden", gv, r.Resource)
					continue
				}
				want.Subresources = slices.DeleteFunc(want.Subresources, func(s apidiscoveryv2.APISubresourceDiscovery) bool {
					return !slices.ContainsFunc(r.Subresources, func(o apidiscoveryv2.APISubresourceDiscovery) bool {
						return o.Subresource == s.Subresource
					})
				})
				compareJSON(t, gv+" "+r.Resource, r, want)
			}
		}
	}
}

func findAggregated(list apidiscoveryv2.APIGroupDiscoveryList, group, version, resource string) (apidiscoveryv2.APIResourceDiscovery, bool) {
	for _, g := range list.Items {
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

// compareJSON compares got and want as the bytes they encode to.
func compareJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}

// checkPrefix checks that got and golden agree up to the end of marker.
func checkPrefix(t *testing.T, got, golden []byte, marker string) {
	t.Helper()
	i := bytes.Index(golden, []byte(marker))
	if i < 0 {
		t.Fatalf("golden has no %q", marker)
	}
	n := i + len(marker)
	if len(got) < n || !bytes.Equal(got[:n], golden[:n]) {
		t.Errorf("body starts with %.*q, golden %q", n, got, golden[:n])
	}
}

func TestAggregatedNotModified(t *testing.T) {
	srv := newTestServer(t, goldenConfig())
	g := readGolden(t, "discovery/apis-aggregated-if-none-match-304", "json")
	first, _ := get(t, srv, g.target, g.reqHeader.Get("Accept"))
	etag := first.Header.Get("Etag")

	tests := []struct {
		name        string
		ifNoneMatch string
		status      int
	}{
		{"same etag", etag, http.StatusNotModified},
		{"kube's etag", g.reqHeader.Get("If-None-Match"), http.StatusOK},
		{"unquoted", strings.Trim(etag, `"`), http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g.reqHeader.Set("If-None-Match", tt.ifNoneMatch)
			resp, body := g.do(t, srv)
			if resp.StatusCode != tt.status {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tt.status)
			}
			if resp.Header.Get("Etag") != etag {
				t.Errorf("Etag = %q, want %q", resp.Header.Get("Etag"), etag)
			}
			if tt.status != http.StatusNotModified {
				return
			}
			checkHeaders(t, g, resp)
			if len(body) != 0 {
				t.Errorf("304 body = %q", body)
			}
		})
	}
}
