package chart

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// binDir holds node and ctl, built once per test binary by binaries.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "litek8s-chart-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	before := runtime.NumGoroutine()
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 && !noGoroutinesLeft(before) {
		code = 1
	}
	os.Exit(code)
}

// noGoroutinesLeft waits a little for the goroutines the tests started
// (one per member process, waiting for it) to end, and reports those left.
func noGoroutinesLeft(before int) bool {
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before+2 { // +2: runtime and testing helpers that come and go
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			fmt.Fprintf(os.Stderr, "goroutines leaked: %d before, %d after\n%s", before, runtime.NumGoroutine(),
				buf[:runtime.Stack(buf, true)])
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

var binBuild struct {
	once sync.Once
	err  error
}

// binaries builds ./cmd/node and ./cmd/ctl (once) and returns their paths.
func binaries(t *testing.T) (node, ctl string) {
	t.Helper()
	binBuild.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		for _, name := range []string{"node", "ctl"} {
			out, err := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(binDir, name), "../../cmd/"+name).CombinedOutput()
			if err != nil {
				binBuild.err = fmt.Errorf("go build ./cmd/%s: %v\n%s", name, err, out)
				return
			}
		}
	})
	if binBuild.err != nil {
		t.Fatal(binBuild.err)
	}
	return filepath.Join(binDir, "node"), filepath.Join(binDir, "ctl")
}

// kubectlPath returns kubectl from PATH, skipping the test without it.
func kubectlPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not on PATH")
	}
	return p
}

// kubectl runs kubectl with kubeconfig and home as its HOME (its
// discovery cache stays in the test's directory), stdin as its input.
func kubectl(t *testing.T, home, kubeconfig, stdin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlPath(t), append([]string{"--kubeconfig", kubeconfig, "--request-timeout", "20s"}, args...)...)
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}
