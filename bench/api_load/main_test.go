package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
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

// TestRunProcesses runs api_load with member processes (-processes) on 1
// and 3 members: the memory table has a row per member after the fill and
// at the end with non-zero RSS and heap figures, each member's heap
// profile is saved, and no node process of the run is left.
func TestRunProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/node and starts member processes")
	}
	for _, members := range []int{1, 3} {
		t.Run(fmt.Sprintf("members=%d", members), func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp) // the run's temp dir, hence its members' command lines, are under tmp
			out, profiles := filepath.Join(tmp, "out.json"), filepath.Join(tmp, "profiles")
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), []string{"-processes", "-members", strconv.Itoa(members), "-clients", "4",
				"-objects", "1000", "-scenario", "get,list_paged", "-runs", "1", "-duration", "1s", "-warmup", "0",
				"-log-level", "error", "-heap-profiles", profiles, "-json", out}, &stdout, &stderr)
			if left := nodeProcesses(t, tmp); len(left) > 0 {
				t.Errorf("node processes left: %v", left)
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			rep, err := report.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Config.Processes || rep.Config.RaftTimeouts != "node defaults" || rep.Memory != nil {
				t.Errorf("config %+v, memory %+v: want processes with node's Raft timeouts and no in-process heap", rep.Config, rep.Memory)
			}
			if len(rep.MemberMemory) != 2*members {
				t.Fatalf("%d memory rows, want %d (each member after the fill and at the end): %+v", len(rep.MemberMemory), 2*members, rep.MemberMemory)
			}
			for i, m := range rep.MemberMemory {
				wantWhen := "after fill"
				if i >= members {
					wantWhen = "end"
				}
				if m.Member != fmt.Sprintf("m%d", i%members) || m.When != wantWhen {
					t.Errorf("row %d is %s %s, want m%d %s", i, m.Member, m.When, i%members, wantWhen)
				}
				if m.VmRSS == 0 || m.RssAnon == 0 || m.VmHWM < m.VmRSS || m.HeapLive == 0 || m.HeapInuse < m.HeapLive ||
					m.StackInuse == 0 || m.GoSys < m.HeapInuse || m.NextGC == 0 {
					t.Errorf("row %d: %+v", i, m)
				}
				if !strings.Contains(stdout.String(), fmt.Sprintf("m%d  %10s", i%members, m.When)) {
					t.Errorf("no table row for %s %s on stdout:\n%s", m.Member, m.When, stdout.String())
				}
			}
			if !slices.ContainsFunc(rep.Targets, func(x report.Target) bool { return x.ID == 8 && strings.HasPrefix(x.Name, "RSS") }) {
				t.Errorf("no RSS target 8: %+v", rep.Targets)
			}
			for i := range members {
				b, err := os.ReadFile(filepath.Join(profiles, fmt.Sprintf("m%d-heap.pb.gz", i)))
				if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
					t.Errorf("heap profile of m%d: %d bytes, %v: want a gzipped profile", i, len(b), err)
				}
				for file, want := range map[string]string{"-heap.txt": "# HeapAlloc = ", "-smaps": "Rss:"} {
					b, err := os.ReadFile(filepath.Join(profiles, fmt.Sprintf("m%d%s", i, file)))
					if err != nil || !strings.Contains(string(b), want) {
						t.Errorf("m%d%s: %v, want a file with %q", i, file, err, want)
					}
				}
			}
			for _, w := range rep.Warnings {
				if strings.Contains(w, "goroutines") {
					t.Errorf("warning: %s", w)
				}
			}
		})
	}
}

// TestProcessesInterrupted cancels a -processes run (Ctrl-C) once its
// members serve: run returns, and no node process of the run is left.
func TestProcessesInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/node and starts member processes")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	running := -1
	stderr := &onLine{prefix: "creating ", f: func() { running = len(nodeProcesses(t, tmp)); cancel() }}
	err := run(ctx, []string{"-processes", "-members", "3", "-objects", "100000", "-scenario", "get",
		"-log-level", "error"}, io.Discard, stderr)
	if err == nil || ctx.Err() == nil {
		t.Fatalf("err = %v, interrupted %v: want the run interrupted while it fills", err, ctx.Err() != nil)
	}
	if running != 3 {
		t.Errorf("%d node processes when interrupted, want 3", running)
	}
	if left := nodeProcesses(t, tmp); len(left) > 0 {
		t.Errorf("node processes left after the interrupted run: %v", left)
	}
}

// onLine calls f once when a line starting with prefix is written.
type onLine struct {
	mu     sync.Mutex
	prefix string
	f      func()
	done   bool
	buf    bytes.Buffer
}

func (w *onLine) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.done {
		for line := range strings.Lines(w.buf.String()) {
			if strings.HasPrefix(line, w.prefix) {
				w.done = true
				w.f()
				break
			}
		}
	}
	return len(p), nil
}

// nodeProcesses lists the processes whose command line names a file
// under dir (the run's node binary and data dirs), as "pid: cmdline".
func nodeProcesses(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue // gone meanwhile
		}
		if cmd := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(cmd, dir) && strings.Contains(cmd, "--data-dir") {
			out = append(out, e.Name()+": "+cmd)
		}
	}
	return out
}

func TestParseFlagsProcesses(t *testing.T) {
	for _, tt := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"-processes"}, ""},
		{[]string{"-processes", "-raft-timeout-scale", "1"}, ""},
		{[]string{"-processes", "-raft-timeout-scale", "4"}, "node has no flags for its Raft timeouts"},
		{[]string{"-heap-profiles", "x"}, "needs -processes"},
		{[]string{"-processes", "-idle-rss"}, "choose one"},
	} {
		o, err := parseFlags(tt.args, io.Discard)
		switch {
		case tt.wantErr == "" && (err != nil || o.raftScale != 1):
			t.Errorf("%v: err %v, raft scale %d: want no error and node's timeouts", tt.args, err, o.raftScale)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%v: err %v, want %q", tt.args, err, tt.wantErr)
		}
	}
}

func TestParseMemStats(t *testing.T) {
	text := "heap profile: 1: 2 [3: 4] @ heap/1048576\n\n# runtime.MemStats\n# Alloc = 10\n# Sys = 500\n" +
		"# HeapAlloc = 10\n# HeapInuse = 20\n# Stack = 30 / 40\n# NextGC = 50\n# NumGC = 3\n"
	var m report.MemberMemory
	if err := parseMemStats([]byte(text), &m); err != nil {
		t.Fatal(err)
	}
	if m.HeapLive != 10 || m.HeapInuse != 20 || m.StackInuse != 30 || m.GoSys != 500 || m.NextGC != 50 {
		t.Errorf("%+v", m)
	}
	if err := parseMemStats([]byte("# HeapAlloc = 10\n"), &m); err == nil {
		t.Error("no error for a profile without the MemStats lines")
	}
}
