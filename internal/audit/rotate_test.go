package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// TestRotation writes 3.5 MB of events to a log of maxsize 1 MB that keeps
// 2 backups: the file never exceeds 1 MB, 2 backups with lumberjack's
// names remain, and every line of them is a whole event.
func TestRotation(t *testing.T) {
	dir := t.TempDir()
	pf := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pf, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "logs", "audit.log")
	l, err := Open(Config{PolicyFile: pf, Path: path, MaxSizeMB: 1, MaxBackups: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rf := l.c.(*rotatingFile)
	clock := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	rf.now = func() time.Time { clock = clock.Add(time.Second); return clock } // distinct backup names (rotate and prune read it)
	ev := &auditv1.Event{Level: auditv1.LevelMetadata, Verb: "get", RequestURI: "/api/v1/" + strings.Repeat("x", 900)}
	for range 3500 {
		if err := l.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	var backups []string
	for _, e := range entries {
		fi, _ := e.Info()
		if fi.Size() > 1<<20 {
			t.Errorf("%s is %d bytes, over 1 MB", e.Name(), fi.Size())
		}
		b, _ := os.ReadFile(filepath.Join(filepath.Dir(path), e.Name()))
		for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if !strings.HasPrefix(line, `{"kind":"Event","apiVersion":"audit.k8s.io/v1"`) || !strings.HasSuffix(line, "}") {
				t.Fatalf("%s: a line that is not a whole event: %.80q", e.Name(), line)
			}
		}
		if e.Name() != "audit.log" {
			backups = append(backups, e.Name())
		}
	}
	// 3.5 MB made 3 rotations; the oldest backup was removed.
	if want := []string{"audit-2026-12-02T08-00-03.000.log", "audit-2026-12-02T08-00-05.000.log"}; strings.Join(backups, " ") != strings.Join(want, " ") {
		t.Errorf("backups %v, want %v", backups, want)
	}
}
