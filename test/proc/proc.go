// Package proc runs member processes for tests: `node` and `ctl` built
// from this module, started on ports chosen at run time, read through
// their kubeconfig, signalled (SIGSTOP, SIGKILL), restarted on the same
// addresses, and stopped on t.Cleanup. Used by test/ops and test/fault.
package proc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Build builds the module's command pkg ("cmd/node", "cmd/ctl") into a
// temporary directory and returns the binary's path.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	out, err := exec.CommandContext(context.Background(), "go", "build", "-o", bin,
		"github.com/litek8s/litek8s/"+pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// Proc is one member process.
type Proc struct {
	t        testing.TB
	ID, Dir  string
	URL      string // the API's https URL
	RaftAddr string
	REST     *rest.Config // admin credentials of its kubeconfig
	HTTP     *http.Client // trusts the cluster CA
	cmd      *exec.Cmd
	exited   chan struct{} // closed when the process has exited
}

// Start starts member id with its data in dir/data, the API on apiAddr and
// Raft on raftAddr (host:0 picks a port), and returns once it printed its
// kubeconfig. It reports errors instead of failing the test, so any
// goroutine may call it. The process is stopped on t.Cleanup (resumed
// first, if paused).
func Start(t testing.TB, bin, id, dir, apiAddr, raftAddr string, args ...string) (*Proc, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	errLog, err := os.OpenFile(filepath.Join(dir, "err.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	args = append([]string{"--id", id, "--data-dir", filepath.Join(dir, "data"),
		"--api-addr", apiAddr, "--raft-addr", raftAddr}, args...)
	cmd := exec.Command(bin, args...)
	cmd.Stderr = errLog
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		errLog.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		errLog.Close()
		return nil, err
	}
	p := &Proc{t: t, ID: id, Dir: dir, cmd: cmd, exited: make(chan struct{})}
	lines := make(chan string, 64) // node prints two lines; later ones are dropped
	go func() {                    // drains stdout until the process ends, then reaps it
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
		cmd.Wait()
		errLog.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "err.log"))
			t.Logf("%s stderr (last 3000 bytes):\n%s", id, tail(b, 3000))
		}
	})
	deadline := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return nil, fmt.Errorf("%s exited before it served", id)
			}
			if rest, ok := strings.CutPrefix(l, "litek8s member "); ok {
				// litek8s member ID serving https://HOST:PORT (raft HOST:PORT)
				if f := strings.Fields(rest); len(f) >= 5 {
					p.URL, p.RaftAddr = f[2], strings.TrimSuffix(f[4], ")")
				}
			}
			if strings.HasPrefix(l, "kubeconfig: ") {
				return p, p.loadKubeconfig()
			}
		case <-deadline:
			p.Kill()
			return nil, fmt.Errorf("%s did not print its kubeconfig within 60s", id)
		}
	}
}

// MustStart is Start for the test goroutine: it fails the test on error.
func MustStart(t testing.TB, bin, id, dir, apiAddr, raftAddr string, args ...string) *Proc {
	t.Helper()
	p, err := Start(t, bin, id, dir, apiAddr, raftAddr, args...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// APIAddr is the API's host:port (what a restart listens on again).
func (p *Proc) APIAddr() string { return strings.TrimPrefix(p.URL, "https://") }

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func (p *Proc) loadKubeconfig() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(p.Dir, "data", "kubeconfig"))
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst, cfg.Timeout = -1, 0, 30*time.Second
	p.REST = cfg
	tc, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return err
	}
	tr := &http.Transport{TLSClientConfig: tc}
	p.HTTP = &http.Client{Timeout: 10 * time.Second, Transport: tr}
	p.t.Cleanup(tr.CloseIdleConnections)
	return nil
}

// Clientset is a client-go clientset for this member with the admin
// credentials of kubeconfig (the same in every member of a cluster).
func (p *Proc) Clientset(kubeconfig *rest.Config) *kubernetes.Clientset {
	cfg := rest.CopyConfig(kubeconfig)
	cfg.Host = p.URL
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		p.t.Fatal(err)
	}
	return cs
}

// Get GETs path on this member with the admin credentials of kubeconfig and
// decodes a JSON answer into out; it returns the status code.
func (p *Proc) Get(ctx context.Context, kubeconfig *rest.Config, path string, out any) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+path, nil)
	if err != nil {
		return 0, err
	}
	if kubeconfig.BearerToken != "" { // else the client certificate of p.HTTP
		req.Header.Set("Authorization", "Bearer "+kubeconfig.BearerToken)
	}
	resp, err := p.HTTP.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s: %w: %s", path, err, tail(b, 300))
		}
	}
	return resp.StatusCode, nil
}

// Signal sends sig to the member process.
func (p *Proc) Signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signal %s: %v", p.ID, err)
	}
}

// Kill kills the process (SIGKILL) and waits until it is gone.
func (p *Proc) Kill() {
	p.cmd.Process.Kill()
	<-p.exited
}

// Stop resumes the process if paused, sends SIGTERM and waits for it to
// exit (SIGKILL after 15 s, which fails the test). Safe to call again.
func (p *Proc) Stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGCONT)
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		p.Kill()
		p.t.Errorf("%s did not stop on SIGTERM", p.ID)
	}
}

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// Pid is the process ID of the member process.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }
