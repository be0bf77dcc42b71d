package discovery

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// pathRecorder records the paths requested through it.
type pathRecorder struct {
	next  http.Handler
	mu    sync.Mutex // protects paths
	paths []string
}

func (p *pathRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.paths = append(p.paths, r.URL.Path)
	p.mu.Unlock()
	p.next.ServeHTTP(w, r)
}

func (p *pathRecorder) requested() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := slices.Clone(p.paths)
	slices.Sort(out)
	return slices.Compact(out)
}

// TestClientGo runs client-go's discovery client against the Handler, with
// aggregated discovery (what client-go 0.37 and kubectl use: only /api and
// /apis are fetched) and with legacy discovery (one request per group
// version).
func TestClientGo(t *testing.T) {
	tests := []struct {
		name   string
		legacy bool
		paths  []string
	}{
		{"aggregated", false, []string{"/api", "/apis"}},
		{"legacy", true, []string{"/api", "/api/v1", "/apis", "/apis/apps/v1", "/apis/coordination.k8s.io/v1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := New(goldenConfig(), testResources())
			if err != nil {
				t.Fatal(err)
			}
			mux := http.NewServeMux()
			h.Register(mux)
			rec := &pathRecorder{next: mux}
			srv := httptest.NewServer(rec)
			t.Cleanup(srv.Close)

			client, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			client.UseLegacyDiscovery = tt.legacy
			groups, resources, err := client.ServerGroupsAndResources()
			if err != nil {
				t.Fatalf("ServerGroupsAndResources: %v", err)
			}
			checkClientGroups(t, groups)
			checkClientResources(t, resources)
			if got := rec.requested(); !slices.Equal(got, tt.paths) {
				t.Errorf("requested %q, want %q", got, tt.paths)
			}
		})
	}
}

func checkClientGroups(t *testing.T, groups []*metav1.APIGroup) {
	t.Helper()
	var got []string
	for _, g := range groups {
		got = append(got, g.Name+" "+g.PreferredVersion.GroupVersion)
	}
	want := []string{" v1", "apps apps/v1", "coordination.k8s.io coordination.k8s.io/v1"}
	if !slices.Equal(got, want) {
		t.Errorf("groups = %q, want %q", got, want)
	}
}

func checkClientResources(t *testing.T, lists []*metav1.APIResourceList) {
	t.Helper()
	type entry struct {
		gv, name, kind, group, version string
		namespaced                     bool
	}
	var got []entry
	for _, l := range lists {
		for _, r := range l.APIResources {
			got = append(got, entry{l.GroupVersion, r.Name, r.Kind, r.Group, r.Version, r.Namespaced})
		}
	}
	// The order of the lists is not defined; compare sorted. Both forms give
	// group and version only for deployments/scale, whose kind is in
	// another group.
	byName := func(a, b entry) int { return strings.Compare(a.gv+" "+a.name, b.gv+" "+b.name) }
	slices.SortFunc(got, byName)
	want := []entry{
		{"v1", "configmaps", "ConfigMap", "", "", true},
		{"v1", "namespaces", "Namespace", "", "", false},
		{"v1", "pods", "Pod", "", "", true},
		{"v1", "pods/status", "Pod", "", "", true},
		{"apps/v1", "deployments", "Deployment", "", "", true},
		{"apps/v1", "deployments/scale", "Scale", "autoscaling", "v1", true},
		{"apps/v1", "deployments/status", "Deployment", "", "", true},
		{"coordination.k8s.io/v1", "leases", "Lease", "", "", true},
	}
	slices.SortFunc(want, byName)
	if !slices.Equal(got, want) {
		t.Errorf("resources:\n got %+v\nwant %+v", got, want)
	}
}
