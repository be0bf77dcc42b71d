package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestNewScenarioTakesTheMedianOfEachFigure(t *testing.T) {
	s := NewScenario("get", 3, []Run{
		{OpsPerSec: 100, P50Ms: 1, P90Ms: 2, P99Ms: 30},
		{OpsPerSec: 300, P50Ms: 3, P90Ms: 6, P99Ms: 10},
		{OpsPerSec: 200, P50Ms: 2, P90Ms: 4, P99Ms: 20},
	})
	if s.OpsPerSec != 200 || s.P50Ms != 2 || s.P90Ms != 4 || s.P99Ms != 20 {
		t.Errorf("got %+v, want the medians 200/2/4/20", s)
	}
}

func TestComputeTargets(t *testing.T) {
	r := &Report{
		Scenarios: []Scenario{
			{Name: "list_all", OpsPerSec: 100},
			{Name: "list_table", OpsPerSec: 60},
			{Name: "list_selector", OpsPerSec: 250},
			{Name: "static", OpsPerSec: 200},
			{Name: "follower_list", OpsPerSec: 95},
			{Name: "create", OpsPerSec: 400},
			{Name: "create_1member", Skipped: "not asked"},
			{Name: "watch_latency", P99Ms: 4.9},
			{Name: "watch_fanout", P99Ms: 51},
		},
		Fill:    &Fill{Objects: 100000, StoredBytes: 70 * mib},
		Memory:  &Memory{Members: 3, HeapLiveAfterFill: 3 * 160 * mib},
		IdleRSS: &IdleRSS{ProcMemory: ProcMemory{VmRSS: 41 * mib}, WaitSeconds: 5},
	}
	got := map[string]Target{}
	for _, x := range ComputeTargets(r) {
		got[x.Name] = x
	}
	want := []struct {
		name  string
		value float64
		pass  bool
	}{
		{"list_table / list_all ops/s", 0.6, true},
		{"list_selector / list_all ops/s", 2.5, false},
		{"list_all / static ops/s", 0.5, false},
		{"follower_list / list_all ops/s", 0.95, true},
		{"watch_latency p99", 4.9, true},
		{"watch_fanout p99", 51, false},
		{"live heap per member, 100000 objects", 160, true}, // limit 1.5*70+64 = 169 MiB
		{"idle single member VmRSS", 41, false},
	}
	for _, w := range want {
		g, ok := got[w.name]
		if !ok {
			t.Errorf("target %q missing; got %v", w.name, got)
			continue
		}
		if diff := g.Value - w.value; diff > 1e-9 || diff < -1e-9 || g.Pass != w.pass {
			t.Errorf("%s = %v pass=%v, want %v pass=%v", w.name, g.Value, g.Pass, w.value, w.pass)
		}
	}
	if _, ok := got["create / create_1member ops/s"]; ok {
		t.Error("target 5 computed although create_1member was skipped")
	}
	if len(got) != len(want) {
		t.Errorf("%d targets, want %d: %v", len(got), len(want), got)
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	r := &Report{Schema: SchemaVersion, Scenarios: []Scenario{{Name: "get", OpsPerSec: 12.5, Runs: []Run{{Ops: 25}}}}}
	if err := r.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := got.Find("get"); !ok || s.OpsPerSec != 12.5 || s.Runs[0].Ops != 25 {
		t.Errorf("round trip = %+v", got)
	}
	r.Schema = SchemaVersion + 1
	if err := r.Save(path); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil {
		t.Error("a newer schema loaded without error")
	}
}

func TestTables(t *testing.T) {
	r := &Report{Scenarios: []Scenario{{Name: "get", OpsPerSec: 2117.4, P50Ms: 12.345, P90Ms: 20, P99Ms: 150},
		{Name: "schedule", Skipped: "needs the scheduler (issue 5)"}}}
	var b bytes.Buffer
	if err := ScenarioTable(r).Write(&b, true); err != nil {
		t.Fatal(err)
	}
	want := "| scenario | ops/s | p50 ms | p90 ms | p99 ms |\n| --- | --- | --- | --- | --- |\n" +
		"| get | 2117 | 12.35 | 20.00 | 150 |\n| schedule | skipped |  |  |  |\n\nschedule skipped: needs the scheduler (issue 5)\n"
	if b.String() != want {
		t.Errorf("markdown table:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	TargetTable([]Target{{ID: 1, Name: "a / b ops/s", Value: 0.5, Unit: "x", Goal: ">= 0.5", Pass: true}}).Write(&b, false)
	if !strings.Contains(b.String(), "0.50x") || !strings.Contains(b.String(), "pass") {
		t.Errorf("target table:\n%s", b.String())
	}
}

// TestRSSTarget: with member processes, target 8 is the largest member
// RSS against 1.5 × stored + 64 MiB, and the memory table says it per row.
func TestRSSTarget(t *testing.T) {
	r := &Report{Fill: &Fill{Objects: 100000, StoredBytes: 70 * mib},
		MemberMemory: []MemberMemory{
			{Member: "m0", When: "after fill", ProcMemory: ProcMemory{VmRSS: 150 * mib}},
			{Member: "m1", When: "end", ProcMemory: ProcMemory{VmRSS: 170 * mib}}, // limit is 169
		}}
	ts := ComputeTargets(r)
	if len(ts) != 1 || ts[0].ID != 8 || ts[0].Value != 170 || ts[0].Pass || !strings.Contains(ts[0].Note, "m1 end") {
		t.Fatalf("targets %+v: want target 8 failing at m1's 170 MiB", ts)
	}
	r.MemberMemory[1].VmRSS = 169 * mib
	if ts := ComputeTargets(r); !ts[0].Pass {
		t.Errorf("169 MiB against 1.5 x 70 + 64 = 169: %+v, want pass", ts[0])
	}
	var b bytes.Buffer
	MemoryTable(r).Write(&b, true)
	if !strings.Contains(b.String(), "| m0 | after fill | 150.0 |") || !strings.Contains(b.String(), "| 70.0 | 2.14 | yes |") {
		t.Errorf("memory table:\n%s", b.String())
	}
	if ts := ComputeTargets(&Report{MemberMemory: r.MemberMemory}); len(ts) != 0 {
		t.Errorf("targets without a fill: %+v", ts)
	}
}
