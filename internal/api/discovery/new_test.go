package discovery

import (
	"errors"
	"log/slog"
	"slices"
	"testing"
)

func TestNewRejects(t *testing.T) {
	ok := Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Verbs: []string{"get"}}
	with := func(f func(*Resource)) []Resource {
		r := ok
		f(&r)
		return []Resource{r}
	}
	tests := []struct {
		name  string
		cfg   Config
		table []Resource
		want  error
	}{
		{"no version", DefaultConfig(), with(func(r *Resource) { r.Version = "" }), ErrInvalidResource},
		{"no kind", DefaultConfig(), with(func(r *Resource) { r.Kind = "" }), ErrInvalidResource},
		{"no verbs", DefaultConfig(), with(func(r *Resource) { r.Verbs = nil }), ErrInvalidResource},
		{"slash in name", DefaultConfig(), with(func(r *Resource) { r.Resource = "pods/status" }), ErrInvalidResource},
		{"slash in group", DefaultConfig(), with(func(r *Resource) { r.Group = "a/b" }), ErrInvalidResource},
		{"unnamed subresource", DefaultConfig(), with(func(r *Resource) {
			r.Subresources = []Subresource{{Verbs: []string{"get"}}}
		}), ErrInvalidResource},
		{"subresource without verbs", DefaultConfig(), with(func(r *Resource) {
			r.Subresources = []Subresource{{Name: "status"}}
		}), ErrInvalidResource},
		{"subresource group without version", DefaultConfig(), with(func(r *Resource) {
			r.Subresources = []Subresource{{Name: "scale", Group: "autoscaling", Verbs: []string{"get"}}}
		}), ErrInvalidResource},
		{"subresource twice", DefaultConfig(), with(func(r *Resource) {
			r.Subresources = []Subresource{{Name: "status", Verbs: []string{"get"}}, {Name: "status", Verbs: []string{"get"}}}
		}), ErrDuplicateResource},
		{"resource twice", DefaultConfig(), []Resource{ok, ok}, ErrDuplicateResource},
		{"no logger", Config{}, []Resource{ok}, ErrInvalidConfig},
		{"bad address", Config{Logger: slog.Default(), ServerAddress: "http://x"}, []Resource{ok}, ErrInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.cfg, tt.table); !errors.Is(err, tt.want) {
				t.Errorf("New: %v, want %v", err, tt.want)
			}
		})
	}
}

// TestNewLeavesTable: New does not sort the caller's verbs in place.
func TestNewLeavesTable(t *testing.T) {
	table := testResources()
	verbs := slices.Clone(table[0].Verbs)
	if _, err := New(goldenConfig(), table); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(table[0].Verbs, verbs) {
		t.Errorf("New sorted the caller's verbs: %q", table[0].Verbs)
	}
}

func TestIndexOrder(t *testing.T) {
	r := func(group, version, resource string) Resource {
		return Resource{Group: group, Version: version, Resource: resource, Kind: "K", Verbs: []string{"get"}}
	}
	idx, err := buildIndex([]Resource{
		r("example.com", "v1", "widgets"),
		r("batch", "v1", "jobs"),
		r("autoscaling", "v1", "horizontalpodautoscalers"),
		r("autoscaling", "v2", "horizontalpodautoscalers"),
		r("coordination.k8s.io", "v1", "leases"),
		r("coordination.k8s.io", "v1beta1", "leases"),
		r("coordination.k8s.io", "v1alpha2", "leasecandidates"),
		r("apps", "v1", "replicasets"),
		r("apps", "v1", "deployments"),
		r("abc.example.com", "v1alpha1", "gadgets"),
		r("", "v1", "pods"),
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range idx.groups {
		for _, v := range g.versions {
			for _, res := range v.resources {
				got = append(got, groupVersion(g.name, v.version)+"/"+res.Resource)
			}
		}
	}
	want := []string{
		"apps/v1/deployments", "apps/v1/replicasets",
		"autoscaling/v2/horizontalpodautoscalers", "autoscaling/v1/horizontalpodautoscalers",
		"batch/v1/jobs",
		"coordination.k8s.io/v1/leases", "coordination.k8s.io/v1beta1/leases", "coordination.k8s.io/v1alpha2/leasecandidates",
		"abc.example.com/v1alpha1/gadgets", "example.com/v1/widgets",
	}
	if !slices.Equal(got, want) {
		t.Errorf("order:\n got %q\nwant %q", got, want)
	}
	if len(idx.core.versions) != 1 || idx.core.versions[0].resources[0].Resource != "pods" {
		t.Errorf("core = %+v", idx.core)
	}
}
