package kubernetesservice

import (
	"reflect"
	"testing"
	"time"
)

func TestServing(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ttl := 5 * time.Second
	ms := []Member{
		{APIURL: "https://10.0.0.1:6443", Self: true},
		{APIURL: "https://10.0.0.2:6443", LastReport: now.Add(-time.Second)},
		{APIURL: "https://10.0.0.3:6443", LastReport: now.Add(-time.Minute)}, // stopped
		{APIURL: "https://10.0.0.4:6443"},                                    // not reported yet
		{APIURL: "https://api.example:6443", Self: false, LastReport: now},   // not an IP
		{APIURL: ""}, // not recorded yet
		{APIURL: "https://[fd00::1]:7443", LastReport: now},
	}
	young := serving(ms, now, now.Add(-time.Second), ttl)
	want := []endpoint{{"10.0.0.1", 6443}, {"10.0.0.2", 6443}, {"10.0.0.4", 6443}, {"fd00::1", 7443}}
	if !reflect.DeepEqual(young, want) {
		t.Errorf("young term: %v, want %v", young, want)
	}
	old := serving(ms, now, now.Add(-time.Minute), ttl)
	want = []endpoint{{"10.0.0.1", 6443}, {"10.0.0.2", 6443}, {"fd00::1", 7443}}
	if !reflect.DeepEqual(old, want) {
		t.Errorf("old term: %v, want %v", old, want)
	}
}

func TestSelfPort(t *testing.T) {
	ms := []Member{{APIURL: "https://m1.example:7443"}, {APIURL: "https://m0.example:6443", Self: true}}
	if p, ok := selfPort(ms); !ok || p != 6443 {
		t.Errorf("selfPort = %d %v, want 6443", p, ok)
	}
	if _, ok := selfPort(ms[:1]); ok {
		t.Error("selfPort without self")
	}
}

func TestGroupsAndObjects(t *testing.T) {
	gs := groups([]endpoint{{"10.0.0.9", 7000}, {"10.0.0.2", 6443}, {"10.0.0.1", 6443}, {"fd00::1", 8000}})
	want := []group{{6443, []string{"10.0.0.1", "10.0.0.2"}}, {7000, []string{"10.0.0.9"}}, {8000, []string{"fd00::1"}}}
	if !reflect.DeepEqual(gs, want) {
		t.Fatalf("groups %v, want %v", gs, want)
	}
	subsets := desiredSubsets(gs)
	if len(subsets) != 3 || len(subsets[0].Addresses) != 2 || subsets[0].Ports[0].Port != 6443 || subsets[0].Ports[0].Name != "https" {
		t.Errorf("subsets %+v", subsets)
	}
	names := []string{sliceName(gs, 0), sliceName(gs, 1), sliceName(gs, 2)}
	if !reflect.DeepEqual(names, []string{"kubernetes", "kubernetes-7000", "kubernetes-8000"}) {
		t.Errorf("slice names %v", names)
	}
	s := desiredSlice(gs, 2)
	if s.AddressType != "IPv6" || *s.Ports[0].Port != 8000 || s.Labels["kubernetes.io/service-name"] != "kubernetes" || len(s.Labels) != 1 {
		t.Errorf("slice %+v", s)
	}
	if !sliceMatches(s, desiredSlice(gs, 2)) || sliceMatches(s, desiredSlice(gs, 1)) {
		t.Error("sliceMatches does not tell slices apart")
	}
	svc := desiredService("10.96.0.1", 6443)
	if p := svc.Spec.Ports[0]; p.Port != 443 || p.TargetPort.IntVal != 6443 || p.Name != "https" || svc.Spec.Selector != nil {
		t.Errorf("service %+v", svc.Spec)
	}
}
