package chart

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// proc is one process made of a rendered container (see pod_test.go). It
// can be started again after it stopped, with the same command, env and
// files, like a container restarting in its Pod.
type proc struct {
	t    *testing.T
	name string // the Pod's name
	dir  string // logs
	path string
	args []string
	env  []string

	starts int
	cmd    *exec.Cmd
	stdout string        // this start's stdout file
	done   chan struct{} // closed once the process has exited
}

// start starts the process; it is stopped on t.Cleanup (SIGTERM, then
// SIGKILL after 15 s) if still running.
func (p *proc) start() error {
	p.starts++
	p.stdout = filepath.Join(p.dir, fmt.Sprintf("%s.%d.stdout", p.name, p.starts))
	stdout, err := os.Create(p.stdout)
	if err != nil {
		return err
	}
	defer stdout.Close()
	stderr, err := os.Create(filepath.Join(p.dir, fmt.Sprintf("%s.%d.stderr", p.name, p.starts)))
	if err != nil {
		return err
	}
	defer stderr.Close()
	cmd := exec.Command(p.path, p.args...)
	cmd.Env = p.env
	cmd.Dir = p.dir
	// *os.File: the child writes them itself, no copying goroutine.
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }() // ends with the process, which cleanup ends
	p.cmd, p.done = cmd, done
	p.t.Cleanup(func() {
		if !stop(cmd, done, 15*time.Second) {
			p.t.Errorf("%s did not stop on SIGTERM within 15s", p.name)
		}
		if p.t.Failed() {
			p.t.Logf("%s stderr (start %d, last 3000 bytes):\n%s", p.name, p.starts, p.stderrTail(3000))
		}
	})
	return nil
}

// stop sends SIGTERM and, after grace, SIGKILL; it reports whether SIGTERM
// was enough. It returns once the process has exited.
func stop(cmd *exec.Cmd, done chan struct{}, grace time.Duration) bool {
	select {
	case <-done:
		return true
	default:
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
		return true
	case <-time.After(grace):
		cmd.Process.Kill()
		<-done
		return false
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() {
	p.t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		p.t.Fatalf("kill %s: %v", p.name, err)
	}
	<-p.done
}

// waitServing waits until the member printed its kubeconfig line: what
// cmd/node prints once the member serves.
func (p *proc) waitServing(ctx context.Context, d time.Duration) error {
	return poll(ctx, d, func() error {
		select {
		case <-p.done:
			return errStop{fmt.Errorf("%s exited before it served", p.name)}
		default:
		}
		b, err := os.ReadFile(p.stdout)
		if err != nil {
			return err
		}
		if !strings.Contains(string(b), "\nkubeconfig: ") {
			return fmt.Errorf("%s has not printed its kubeconfig yet", p.name)
		}
		return nil
	})
}

func (p *proc) stderrTail(n int) string {
	b, _ := os.ReadFile(filepath.Join(p.dir, fmt.Sprintf("%s.%d.stderr", p.name, p.starts)))
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// errStop ends a poll at once.
type errStop struct{ error }

// poll calls f every 100 ms until it returns nil, an errStop, or d has
// passed (then its last error); it runs on any goroutine.
func poll(ctx context.Context, d time.Duration, f func() error) error {
	deadline := time.Now().Add(d)
	for {
		err := f()
		var stopErr errStop
		switch {
		case err == nil:
			return nil
		case errors.As(err, &stopErr):
			return stopErr.error
		case time.Now().After(deadline):
			return fmt.Errorf("not true after %v: %w", d, err)
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
