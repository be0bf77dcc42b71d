package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/litek8s/litek8s/bench/internal/report"
)

func rep(ss ...report.Scenario) *report.Report {
	return &report.Report{Schema: report.SchemaVersion, Scenarios: ss}
}

func sc(name string, ops, p99 float64) report.Scenario {
	return report.Scenario{Name: name, OpsPerSec: ops, P50Ms: p99 / 4, P90Ms: p99 / 2, P99Ms: p99}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name          string
		base, branch  report.Scenario
		wantRegressed bool
		wantWhy       string
	}{
		{"same", sc("get", 1000, 10), sc("get", 1000, 10), false, ""},
		{"faster", sc("get", 1000, 10), sc("get", 2000, 5), false, ""},
		{"ops/s down 15% is noise", sc("get", 1000, 10), sc("get", 850, 10), false, ""},
		{"ops/s down exactly 20% is tolerated", sc("get", 1000, 10), sc("get", 800, 10), false, ""},
		{"ops/s down 25%", sc("get", 1000, 10), sc("get", 750, 10), true, "ops/s -25%"},
		{"p99 up 30% is noise", sc("get", 1000, 10), sc("get", 1000, 13), false, ""},
		{"p99 up 50%", sc("get", 1000, 10), sc("get", 1000, 15), true, "p99 +50%"},
		{"both", sc("get", 1000, 10), sc("get", 500, 30), true, "ops/s -50%, p99 +200%"},
		{"p99 up 100% but by 0.1 ms is under the floor", sc("w", 1000, 0.1), sc("w", 1000, 0.2), false, ""},
		{"base without figures", sc("get", 0, 0), sc("get", 10, 10), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds := Compare(rep(tt.base), rep(tt.branch), DefaultThresholds)
			if len(ds) != 1 {
				t.Fatalf("%d deltas, want 1", len(ds))
			}
			d := ds[0]
			if d.Regressed != tt.wantRegressed || d.Why != tt.wantWhy {
				t.Errorf("regressed=%v why=%q, want %v %q", d.Regressed, d.Why, tt.wantRegressed, tt.wantWhy)
			}
		})
	}
}

func TestCompareMissingSides(t *testing.T) {
	base := rep(sc("get", 1, 1), sc("gone", 1, 1), report.Scenario{Name: "schedule", Skipped: "needs the scheduler"})
	branch := rep(sc("get", 1, 1), sc("new", 1, 1), report.Scenario{Name: "schedule", Skipped: "needs the scheduler"})
	got := map[string]string{}
	var order []string
	for _, d := range Compare(base, branch, DefaultThresholds) {
		got[d.Name] = d.Why
		order = append(order, d.Name)
		if d.Regressed {
			t.Errorf("%s regressed", d.Name)
		}
	}
	want := map[string]string{"get": "", "new": "new", "schedule": "skipped", "gone": "not measured on the branch"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: why %q, want %q", k, got[k], v)
		}
	}
	if !slices.Equal(order, []string{"get", "new", "schedule", "gone"}) {
		t.Errorf("order %v: want the branch's order, then what only the base has", order)
	}
}

func TestConfirmed(t *testing.T) {
	base := rep(sc("a", 100, 1), sc("b", 100, 1), sc("c", 100, 1))
	first := Compare(base, rep(sc("a", 50, 1), sc("b", 50, 1), sc("c", 100, 1)), DefaultThresholds)
	again := Compare(base, rep(sc("a", 100, 1), sc("b", 50, 1), sc("c", 50, 1)), DefaultThresholds)
	if got := Confirmed(first, again); !slices.Equal(got, []string{"b"}) {
		t.Errorf("Confirmed = %v, want [b]: only b regressed both times", got)
	}
}

func write(t *testing.T, dir, name string, r *report.Report) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := r.Save(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	base := write(t, dir, "base.json", rep(sc("get", 1000, 10), sc("list_all", 100, 50)))
	slow := write(t, dir, "slow.json", rep(sc("get", 1000, 10), sc("list_all", 50, 50)))
	same := write(t, dir, "same.json", rep(sc("get", 1010, 10), sc("list_all", 99, 52)))
	regressedFile := filepath.Join(dir, "regressed")
	tests := []struct {
		name      string
		args      []string
		wantCode  int
		wantFile  string
		wantInOut string
	}{
		{"no regression", []string{"-base", base, "-branch", same, "-regressed", regressedFile}, 0, "", "no regression"},
		{"regressed once: measure again", []string{"-base", base, "-branch", slow, "-regressed", regressedFile}, 0, "list_all",
			"to be measured again: list_all"},
		{"regressed twice", []string{"-base", base, "-branch", slow, "-base-again", base, "-branch-again", slow}, 1, "",
			"REGRESSION: list_all regressed both times"},
		{"regressed once only", []string{"-base", base, "-branch", slow, "-base-again", base, "-branch-again", same}, 0, "",
			"did not regress again"},
		{"against itself", []string{"-base", base, "-branch", base}, 0, "", "no regression"},
		{"missing flag", []string{"-base", base}, 2, "", ""},
		{"unreadable report", []string{"-base", base, "-branch", filepath.Join(dir, "none.json")}, 2, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(regressedFile)
			var out, errOut bytes.Buffer
			code, _ := run(tt.args, &out, &errOut)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.wantCode, out.String(), errOut.String())
			}
			if !strings.Contains(out.String(), tt.wantInOut) {
				t.Errorf("output lacks %q:\n%s", tt.wantInOut, out.String())
			}
			if slices.Contains(tt.args, "-regressed") {
				b, err := os.ReadFile(regressedFile)
				if err != nil || string(b) != tt.wantFile {
					t.Errorf("regressed file = %q (%v), want %q", b, err, tt.wantFile)
				}
			}
		})
	}
}
