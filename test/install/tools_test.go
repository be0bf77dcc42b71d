package install

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/member/adminapi"
	"github.com/litek8s/litek8s/internal/member/membertest"
	"github.com/litek8s/litek8s/test/helmbin"
	"github.com/litek8s/litek8s/test/realcluster"
)

// host runs kubectl and helm against the real Kubernetes.
type host struct {
	t       *testing.T
	ctx     context.Context // what the commands run under
	c       *realcluster.Cluster
	helmBin string
	helmEnv []string
}

func newHost(t *testing.T, c *realcluster.Cluster) *host {
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "KUBECONFIG=" + c.Kubeconfig,
		"HELM_CACHE_HOME=" + filepath.Join(home, "cache"), "HELM_CONFIG_HOME=" + filepath.Join(home, "config"),
		"HELM_DATA_HOME=" + filepath.Join(home, "data")}
	return &host{t: t, ctx: t.Context(), c: c, helmBin: helmbin.Binary(t), helmEnv: env}
}

func run(ctx context.Context, timeout time.Duration, env []string, bin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s%s", filepath.Base(bin), strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out), nil
}

// detached is h for a t.Cleanup, whose t.Context() is already cancelled.
func (h *host) detached() *host {
	d := *h
	d.ctx = context.Background()
	return &d
}

// kubectl runs the host cluster's kubectl.
func (h *host) kubectl(args ...string) (string, error) {
	return run(h.ctx, 3*time.Minute, append(os.Environ(), "KUBECONFIG="+h.c.Kubeconfig), h.c.Kubectl(), args...)
}

func (h *host) mustKubectl(args ...string) string {
	h.t.Helper()
	out, err := h.kubectl(args...)
	if err != nil {
		h.t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// helm runs Helm against the host cluster (10 minutes at most: --wait).
func (h *host) helm(args ...string) (string, error) {
	return run(h.ctx, 10*time.Minute, h.helmEnv, h.helmBin, args...)
}

func (h *host) mustHelm(args ...string) string {
	h.t.Helper()
	out, err := h.helm(args...)
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// statusOutput is what `ctl status -o json` prints.
type statusOutput struct {
	Members []struct {
		adminapi.MemberInfo
		Status *adminapi.Status `json:"status"`
		Error  string           `json:"error"`
	} `json:"members"`
}

// ctlStatus runs `ctl status -o json` in pod (kubectl exec, as NOTES.txt
// says).
func (h *host) ctlStatus(ns, pod string) (statusOutput, error) {
	out, err := h.kubectl("-n", ns, "exec", pod, "-c", "node", "--", "ctl", "status", "-o", "json")
	var st statusOutput
	if jerr := json.Unmarshal([]byte(out), &st); jerr != nil {
		if err == nil {
			err = jerr
		}
		return st, err
	}
	return st, nil // exit 1 (a member unreachable) still prints the status
}

// healthy checks that st shows exactly the members want, every one a
// voter, ready, and one of them leading; it returns the leader's ID.
func healthy(st statusOutput, want []string) (string, error) {
	var ids []string
	leader := ""
	for _, m := range st.Members {
		ids = append(ids, m.ID)
		switch {
		case m.Status == nil:
			return "", fmt.Errorf("member %s does not answer: %s", m.ID, m.Error)
		case !m.Status.Ready:
			return "", fmt.Errorf("member %s is not ready", m.ID)
		case m.Suffrage != "Voter":
			return "", fmt.Errorf("member %s is a %s", m.ID, m.Suffrage)
		case m.Status.Role == "Leader":
			leader = m.ID
		}
	}
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		return "", fmt.Errorf("members %v, want %v", ids, want)
	}
	if leader == "" {
		return "", fmt.Errorf("no leader among %v", ids)
	}
	return leader, nil
}

// eventually polls f every 500 ms until it returns nil or d has passed.
func eventually(t testing.TB, d time.Duration, f func() error) {
	t.Helper()
	membertest.EventuallyEvery(t, d, 500*time.Millisecond, f)
}
