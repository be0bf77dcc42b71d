package main

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/litek8s/litek8s/bench/internal/report"
)

func TestSelectScenarios(t *testing.T) {
	names := func(ss []scenario) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.name)
		}
		return out
	}
	all, err := selectScenarios("all", false)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(names(all), "create_1member") || !slices.Contains(names(all), "schedule") || len(all) != len(scenarios)-1 {
		t.Errorf("all = %v: want every scenario but the optional create_1member", names(all))
	}
	withSingle, _ := selectScenarios("all", true)
	if names(withSingle)[len(withSingle)-1] != "create_1member" {
		t.Errorf("all with -compare-single = %v: want create_1member last", names(withSingle))
	}
	some, err := selectScenarios("static,list_all,list_all", false)
	if err != nil || !slices.Equal(names(some), []string{"list_all", "static"}) {
		t.Errorf("static,list_all,list_all = %v, %v: want [list_all static] (canonical order, once each)", names(some), err)
	}
	for _, s := range scenarios {
		if s.prepare != nil && !slices.Contains(runOrder, s.name) {
			t.Errorf("%s is not in runOrder", s.name)
		}
	}
	if _, err := selectScenarios("list_al", false); err == nil || !strings.Contains(err.Error(), "list_all") {
		t.Errorf("unknown name: err = %v, want one that lists the valid names", err)
	}
}

func TestBodyShape(t *testing.T) {
	var s bodyShape
	for _, p := range []string{`{"items":[`, `1,2]}`, "\n", ""} {
		s.Write([]byte(p))
	}
	if s.n != 16 || s.last != '}' {
		t.Errorf("n=%d last=%q, want 16 and '}' (trailing white space ignored)", s.n, s.last)
	}
}

func TestVerifyList(t *testing.T) {
	item := func(name, group string) string {
		return `{"metadata":{"name":"` + name + `","labels":{"bench-group":"` + group + `"}},"data":{}}`
	}
	list := `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[` +
		item("a", "g0") + "," + item("b", "g1") + `]}`
	tests := []struct {
		name    string
		body    string
		want    listCheck
		wantErr string
	}{
		{"ok", list, listCheck{kind: "ConfigMapList", items: 2}, ""},
		{"count", list, listCheck{kind: "ConfigMapList", items: 3}, "with 2 items, want 3"},
		{"selector", list, listCheck{kind: "ConfigMapList", items: 2, group: "g0"}, "want bench-group=g0"},
		{"kind", list, listCheck{kind: "Table", items: 2}, `got kind "ConfigMapList"`},
		{"truncated", list[:len(list)-3], listCheck{kind: "ConfigMapList", items: 2}, "decoding"},
		{"table", `{"kind":"Table","metadata":{"resourceVersion":"9"},"rows":[{"cells":["a"],"object":{"metadata":{"name":"a"}}}]}`,
			listCheck{kind: "Table", items: 1}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stored, err := verifyList([]byte(tt.body), tt.want)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if tt.want.kind == "ConfigMapList" && stored != int64(len(item("a", "g0"))+len(item("b", "g1"))) {
					t.Errorf("stored = %d", stored)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestRunSmall runs every scenario at a tiny scale on 3 in-process
// members and a 1-member cluster: it checks that each one works end to
// end and that api_load closes everything it started.
func TestRunSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two clusters")
	}
	out := filepath.Join(t.TempDir(), "out.json")
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"-members", "3", "-clients", "4", "-objects", "30", "-runs", "2",
		"-duration", "200ms", "-warmup", "50ms", "-watchers", "12", "-compare-single", "-log-level", "error",
		"-json", out}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	rep, err := report.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Scenarios {
		switch {
		case s.Skipped != "":
			t.Errorf("%s skipped: %s", s.Name, s.Skipped)
		case len(s.Runs) != 2 || s.OpsPerSec <= 0 || s.P99Ms <= 0:
			t.Errorf("%s: %+v", s.Name, s)
		}
	}
	if rep.ControllerResyncs != 0 {
		t.Errorf("controllers resynced %d times: they fell behind the change feed", rep.ControllerResyncs)
	}
	if len(rep.Scenarios) != len(scenarios) {
		t.Errorf("%d scenarios in the report, want %d", len(rep.Scenarios), len(scenarios))
	}
	if f := rep.Fill; f == nil || f.ObjectBytes < 650 || f.ObjectBytes > 750 {
		t.Errorf("fill = %+v: want objects of about 700 bytes", f)
	}
	if len(rep.Targets) < 7 {
		t.Errorf("targets: %+v", rep.Targets)
	}
	for _, w := range rep.Warnings {
		if strings.Contains(w, "goroutines") {
			t.Errorf("warning: %s\n%s", w, stderr.String())
		}
	}
	if !strings.Contains(stdout.String(), "list_selector") {
		t.Errorf("no table on stdout:\n%s", stdout.String())
	}
}
