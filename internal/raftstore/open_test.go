package raftstore

import (
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/raftlog"
)

// A second store on a data dir another holds is refused within
// raftlog.DefaultLockTimeout, saying the dir is in use.
func TestOpenDataDirInUse(t *testing.T) {
	t.Cleanup(checkNoGoroutineLeak(t))
	cfg := DefaultConfig()
	cfg.DataDir = filepath.Join(t.TempDir(), "d")
	cfg.RaftAddr = "127.0.0.1:0"
	cfg.Bootstrap = true
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	second, err := Open(cfg)
	if err == nil {
		second.Close()
		t.Fatal("a second store opened the same data dir")
	}
	if want := "data dir " + cfg.DataDir + " is in use by another process"; !strings.Contains(err.Error(), want) {
		t.Errorf("second open: %v, want %q", err, want)
	}
	if took := time.Since(start); took > raftlog.DefaultLockTimeout+time.Second {
		t.Errorf("second open took %s", took)
	}
}
