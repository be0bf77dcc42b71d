package kv

import (
	"maps"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

func TestLabels(t *testing.T) {
	var b LabelsBuilder
	long := strings.Repeat("v", 300) // a length of two uvarint bytes
	b.Add("app", "web")
	b.Add("example.com/tier", "")
	b.Add("long", long)
	l := b.Labels()
	want := map[string]string{"app": "web", "example.com/tier": "", "long": long}
	if got := l.Map(); !maps.Equal(got, want) {
		t.Fatalf("Map() = %v, want %v", got, want)
	}
	if l.Len() != 3 || l.Get("app") != "web" || !l.Has("example.com/tier") || l.Has("tier") || l.Get("long") != long {
		t.Fatalf("lookups of %s wrong", l)
	}
	for _, s := range []string{"app=web", "app=web,long", "example.com/tier=", "!missing", "app in (web,api)"} {
		sel, err := labels.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := sel.Matches(l), sel.Matches(labels.Set(want)); got != want {
			t.Errorf("%q matches packed labels %v, a Set %v", s, got, want)
		}
	}
	if b.Labels() != (Labels{}) || (Labels{}).Len() != 0 || (Labels{}).Map() != nil {
		t.Fatal("an empty builder or zero Labels has labels")
	}
	b.Add("k", "1")
	b.Add("k", "2")
	if got := b.Labels().Get("k"); got != "2" {
		t.Fatalf("a key written twice: %q, want the last value as a JSON decoder keeps", got)
	}
}

// BenchmarkLabelsGet is the lookup a label selector does per object.
func BenchmarkLabelsGet(b *testing.B) {
	l := LabelsOf(map[string]string{"app": "web", "bench-group": "g3", "tier": "frontend"})
	b.ReportAllocs()
	for b.Loop() {
		if l.Get("tier") != "frontend" {
			b.Fatal("lost")
		}
	}
}
