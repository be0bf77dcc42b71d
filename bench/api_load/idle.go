package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/litek8s/litek8s/bench/internal/report"
)

// measureIdleRSS is target 9, which needs a process of its own (in
// process, members share one): it builds cmd/node, and twice starts one
// member with an empty data dir under tmp, waits wait after it printed its
// kubeconfig line, reads its memory figures, and stops it with SIGTERM.
// The first member keeps what start-up used (--release-startup-memory 0),
// the second runs as configured by default.
func measureIdleRSS(ctx context.Context, tmp string, wait time.Duration, stderr io.Writer) (*report.IdleRSS, error) {
	bin, err := buildNode(ctx, tmp, stderr)
	if err != nil {
		return nil, err
	}
	kept, err := idleMember(ctx, bin, filepath.Join(tmp, "idle-kept"), wait, stderr, "--release-startup-memory", "0")
	if err != nil {
		return nil, err
	}
	res, err := idleMember(ctx, bin, filepath.Join(tmp, "idle"), wait, stderr)
	if err != nil {
		return nil, err
	}
	res.StartupKept = &kept.ProcMemory
	return res, nil
}

// idleMember starts one member of bin on dataDir, measures it after wait
// and stops it.
func idleMember(ctx context.Context, bin, dataDir string, wait time.Duration, stderr io.Writer, args ...string) (*report.IdleRSS, error) {
	cmd := exec.Command(bin, append([]string{"--id", "idle", "--data-dir", dataDir,
		"--api-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0", "--log-level", "warn"}, args...)...)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// stop the member whatever happens, and reap it
	lines := make(chan string, 64)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // nobody listens any more; keep draining
			}
		}
	}()
	stop := func() error {
		cmd.Process.Signal(syscall.SIGTERM)
		timer := time.AfterFunc(10*time.Second, func() { cmd.Process.Kill() })
		defer timer.Stop()
		<-drained
		return cmd.Wait()
	}
	res, err := waitIdle(ctx, cmd.Process.Pid, lines, wait)
	if serr := stop(); err == nil && serr != nil {
		err = fmt.Errorf("node did not stop cleanly: %w", serr)
	}
	return res, err
}

// waitIdle waits for the member's "kubeconfig:" line, then wait, and reads
// its memory figures.
func waitIdle(ctx context.Context, pid int, lines <-chan string, wait time.Duration) (*report.IdleRSS, error) {
	started := time.After(30 * time.Second)
	for ready := false; !ready; {
		select {
		case l := <-lines:
			ready = strings.HasPrefix(l, "kubeconfig:")
		case <-started:
			return nil, fmt.Errorf("node did not print its kubeconfig line within 30s")
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	select {
	case <-time.After(wait):
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	var m report.ProcMemory
	for _, f := range []struct {
		key string
		to  *uint64
	}{{"VmRSS", &m.VmRSS}, {"VmHWM", &m.VmHWM}, {"RssAnon", &m.RssAnon}, {"RssFile", &m.RssFile}} {
		v, err := procStatus(pid, f.key)
		if err != nil {
			return nil, err
		}
		*f.to = v
	}
	return &report.IdleRSS{WaitSeconds: wait.Seconds(), ProcMemory: m}, nil
}

// mib is n bytes in MiB.
func mib(n uint64) float64 { return float64(n) / (1 << 20) }
