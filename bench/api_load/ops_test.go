package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/litek8s/litek8s/bench/internal/report"
)

// TestRunOps runs every op (-ops all) on 3 member processes: each figure
// is in the report and positive, every member the ops started held every
// object, the cluster is back to its 3 members, and no process, data dir
// or backup of the run is left.
func TestRunOps(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/node and cmd/ctl and starts member processes")
	}
	const objects = 300
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the run's temp dir, hence its processes' command lines, are under tmp
	out := filepath.Join(tmp, "out.json")
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"-processes", "-members", "3", "-clients", "4", "-objects", "300", "-scenario", "get",
		"-runs", "1", "-duration", "200ms", "-warmup", "0", "-log-level", "error", "-ops", "all", "-json", out}, &stdout, &stderr)
	if left := nodeProcesses(t, tmp); len(left) > 0 {
		t.Errorf("node processes left: %v", left)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	ents, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "api_load-") {
			t.Errorf("the run's temp dir %s is left", e.Name())
		}
	}
	rep, err := report.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	o := rep.Ops
	if o == nil || o.Restart == nil || o.Kill == nil || o.Join == nil || o.Snapshot == nil {
		t.Fatalf("ops in the report: %+v", o)
	}
	want := listed(objects)
	for op, r := range map[string]*report.RestartOp{"restart": o.Restart, "kill": o.Kill} {
		if !slices.Contains([]string{"m0", "m1", "m2"}, r.Member) || r.StopMs <= 0 || r.ServingMs <= 0 ||
			r.ReadyMs < r.ServingMs || r.DataMs < r.ServingMs || r.Items != want || r.VmRSS == 0 {
			t.Errorf("%s: %+v (want %d items)", op, r, want)
		}
	}
	j := o.Join
	if j.Member != "m3" || j.ServingMs <= 0 || j.VoterMs <= 0 || j.DataMs < j.ServingMs || j.Items != want ||
		j.VmRSS == 0 || j.RemoveMs <= 0 || j.SnapshotsInstalled < 0 || (j.SnapshotsInstalled > 0) != (j.SnapshotBytes > 0) {
		t.Errorf("join: %+v (want %d items)", j, want)
	}
	s := o.Snapshot
	if s.Member == "" || s.SaveMs <= 0 || s.FileBytes <= 0 || s.Index == 0 || s.Objects < objects || s.RestoreMs <= 0 ||
		s.ServingMs <= 0 || s.ReadyMs < s.ServingMs || s.DataMs < s.ServingMs || s.Items != want || s.VmRSS == 0 {
		t.Errorf("snapshot: %+v (want %d items, %d objects or more)", s, want, objects)
	}
	for _, row := range []string{"SIGKILL -> exited", "exec -> serving line", "exec -> voter", "ctl snapshot save", "ctl snapshot restore"} {
		if !strings.Contains(stdout.String(), row) {
			t.Errorf("no %q row on stdout:\n%s", row, stdout.String())
		}
	}
	for _, w := range rep.Warnings {
		if strings.Contains(w, "goroutines") {
			t.Errorf("warning: %s", w)
		}
	}
}

func TestParseFlagsOps(t *testing.T) {
	for _, tt := range []struct {
		args    []string
		want    []string
		wantErr string
	}{
		{[]string{"-processes"}, nil, ""},
		{[]string{"-processes", "-ops", "all"}, []string{"restart", "kill", "join", "snapshot"}, ""},
		{[]string{"-processes", "-ops", "snapshot,kill"}, []string{"kill", "snapshot"}, ""},
		{[]string{"-processes", "-ops", "snapshot,restart,snapshot"}, []string{"restart", "snapshot"}, ""},
		{[]string{"-processes", "-members", "1", "-ops", "join,snapshot"}, []string{"join", "snapshot"}, ""},
		{[]string{"-ops", "all"}, nil, "-ops needs -processes"},
		{[]string{"-ops", "restart"}, nil, "-ops needs -processes"},
		{[]string{"-processes", "-ops", "reboot"}, nil, `unknown op "reboot"`},
		{[]string{"-processes", "-members", "1", "-ops", "all"}, nil, "needs a follower"},
		{[]string{"-processes", "-members", "1", "-ops", "kill"}, nil, "-ops kill needs a follower"},
	} {
		o, err := parseFlags(tt.args, io.Discard)
		switch {
		case tt.wantErr == "" && (err != nil || !slices.Equal(o.ops, tt.want)):
			t.Errorf("%v: ops %v, err %v: want %v", tt.args, o.ops, err, tt.want)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%v: err %v, want %q", tt.args, err, tt.wantErr)
		}
	}
}

func TestItemCounter(t *testing.T) {
	list := `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[` +
		`{"metadata":{"name":"a","labels":{"x":"{[\"}"}},"data":{"k":"]}{"}},` +
		`{"metadata":{"name":"b","managedFields":[{"f":{}}]},"data":{}}]}` + "\n"
	for _, chunk := range []int{1, 7, len(list)} {
		var c itemCounter
		for i := 0; i < len(list); i += chunk {
			if _, err := c.Write([]byte(list[i:min(i+chunk, len(list))])); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.done(); err != nil || c.items != 2 {
			t.Errorf("chunks of %d: %d items, %v: want 2", chunk, c.items, err)
		}
	}
	var c itemCounter
	c.Write([]byte(list[:len(list)-4]))
	if err := c.done(); err == nil {
		t.Error("a truncated list: no error")
	}
	if _, err := new(itemCounter).Write([]byte(`{"items":[}`)); err == nil {
		t.Error("unbalanced: no error")
	}
}

func TestWithAddrs(t *testing.T) {
	args := []string{"--id", "m1", "--api-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0", "--join", "https://x"}
	got := withAddrs(args, "127.0.0.1:1", "127.0.0.1:2")
	want := []string{"--id", "m1", "--api-addr", "127.0.0.1:1", "--raft-addr", "127.0.0.1:2", "--join", "https://x"}
	if !slices.Equal(got, want) || args[3] != "127.0.0.1:0" {
		t.Errorf("got %v, args now %v: want %v and args unchanged", got, args, want)
	}
}

// TestOpsInterrupted cancels a run (Ctrl-C) while the join op's member
// runs: run returns, and no node process nor the run's temp dir is left.
func TestOpsInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/node and starts member processes")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	running := -1
	stderr := &onLine{prefix: "join m3: voter after", f: func() { running = len(nodeProcesses(t, tmp)); cancel() }}
	err := run(ctx, []string{"-processes", "-members", "3", "-clients", "4", "-objects", "100", "-scenario", "get",
		"-runs", "1", "-duration", "100ms", "-warmup", "0", "-log-level", "error", "-ops", "join,snapshot"}, io.Discard, stderr)
	if err == nil || ctx.Err() == nil {
		t.Fatalf("err = %v, interrupted %v: want the run interrupted during the join op\n%s", err, ctx.Err() != nil, stderr.buf.String())
	}
	if running != 4 {
		t.Errorf("%d node processes when interrupted, want 4 (3 members and the joiner)", running)
	}
	if left := nodeProcesses(t, tmp); len(left) > 0 {
		t.Errorf("node processes left after the interrupted run: %v", left)
	}
	ents, _ := os.ReadDir(tmp)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "api_load-") {
			t.Errorf("the run's temp dir %s is left", e.Name())
		}
	}
}
