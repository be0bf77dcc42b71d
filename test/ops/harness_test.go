package ops

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

// buildNode builds cmd/node into a temporary directory.
func buildNode(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "node")
	out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "../../cmd/node").CombinedOutput()
	if err != nil {
		t.Fatalf("build node: %v\n%s", err, out)
	}
	return bin
}

// buildCtl builds cmd/ctl into a temporary directory.
func buildCtl(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ctl")
	out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "../../cmd/ctl").CombinedOutput()
	if err != nil {
		t.Fatalf("build ctl: %v\n%s", err, out)
	}
	return bin
}

// proc is one member process.
type proc struct {
	t       *testing.T
	id, dir string
	cmd     *exec.Cmd
	url     string
	rest    *rest.Config
	http    *http.Client
}

// startNode starts member id with its data in dir/data, on ports chosen at
// run time, and returns once it printed its kubeconfig. It is stopped (and
// resumed first, if paused) on t.Cleanup.
func startNode(t *testing.T, bin, id, dir string, args ...string) *proc {
	t.Helper()
	return startNodeAt(t, bin, id, dir, "127.0.0.1:0", args...)
}

// startNodeAt is startNode with the API on apiAddr.
func startNodeAt(t *testing.T, bin, id, dir, apiAddr string, args ...string) *proc {
	t.Helper()
	p, err := launch(t, bin, id, dir, apiAddr, args...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// launch is startNodeAt for any goroutine: it reports errors instead of
// failing the test. The process is stopped on t.Cleanup either way.
func launch(t *testing.T, bin, id, dir, apiAddr string, args ...string) (*proc, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	errLog, err := os.Create(filepath.Join(dir, "err.log"))
	if err != nil {
		return nil, err
	}
	args = append([]string{"--id", id, "--data-dir", filepath.Join(dir, "data"),
		"--api-addr", apiAddr, "--raft-addr", "127.0.0.1:0"}, args...)
	cmd := exec.Command(bin, args...)
	cmd.Stderr = errLog
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{t: t, id: id, dir: dir, cmd: cmd}
	lines := make(chan string, 64) // node prints two lines; later ones are dropped
	go func() {                    // drains stdout until the process ends
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("%s did not stop on SIGTERM", id)
		}
		errLog.Close()
		if t.Failed() {
			b, _ := os.ReadFile(errLog.Name())
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
				if i := strings.Index(rest, "https://"); i >= 0 {
					p.url = strings.Fields(rest[i:])[0]
				}
			}
			if strings.HasPrefix(l, "kubeconfig: ") {
				return p, p.loadKubeconfig()
			}
		case <-deadline:
			return nil, fmt.Errorf("%s did not print its kubeconfig within 60s", id)
		}
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func (p *proc) loadKubeconfig() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(p.dir, "data", "kubeconfig"))
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst, cfg.Timeout = -1, 0, 30*time.Second
	p.rest = cfg
	tc, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return err
	}
	p.http = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}
	p.t.Cleanup(p.http.CloseIdleConnections)
	return nil
}

// clientset is a client-go clientset for this member, with the admin
// credentials of kubeconfig (the same in every member of a cluster).
func (p *proc) clientset(kubeconfig *rest.Config) *kubernetes.Clientset {
	cfg := rest.CopyConfig(kubeconfig)
	cfg.Host = p.url
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		p.t.Fatal(err)
	}
	return cs
}

// get GETs path on this member with the admin token of kubeconfig and
// decodes a JSON answer into out; it returns the status code.
func (p *proc) get(ctx context.Context, kubeconfig *rest.Config, path string, out any) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+kubeconfig.BearerToken)
	resp, err := p.http.Do(req)
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

// signal sends sig to the member process.
func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signal %s: %v", p.id, err)
	}
}
