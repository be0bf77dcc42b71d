package realcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/litek8s/litek8s/test/helmbin"
)

// MetricsServerVersion is the kubernetes-sigs/metrics-server release
// build.sh builds (METRICS_SERVER_VERSION in lib.sh); its chart comes from
// the same module.
const MetricsServerVersion = "v0.8.0"

// metricsServerArgs are the chart values that fit the harness's kubelet:
// the image up.sh loaded (never pulled), the kubelet's self-signed serving
// certificate (serverTLSBootstrap false) and its InternalIP, the node IP.
// The README's helm command uses the same.
func metricsServerArgs(image string) []string {
	repo, tag, _ := strings.Cut(image, ":")
	return []string{
		"--set", "image.repository=" + repo, "--set", "image.tag=" + tag, "--set", "image.pullPolicy=Never",
		"--set", "args={--kubelet-insecure-tls,--kubelet-preferred-address-types=InternalIP}",
	}
}

// TestMetricsServer installs kubernetes-sigs/metrics-server's own Helm
// chart (from the Go module cache) with the image build.sh built, on
// three litek8s members with the real node, and checks what an operator
// sees: `helm install --wait` succeeds, the APIService
// v1beta1.metrics.k8s.io becomes Available (the API is aggregated:
// litek8s proxies /apis/metrics.k8s.io to the metrics-server pod with the
// user in the front-proxy headers), and `kubectl top nodes` and `kubectl
// top pods -n kube-system` print the node and CoreDNS with CPU and memory
// figures that metrics-server scraped from the kubelet.
//
// METRICS_APISERVER=kube runs the same checks against kube-apiserver's
// aggregator (Up), which is how the image and the install are checked.
func TestMetricsServer(t *testing.T) {
	var c *Cluster
	if os.Getenv("METRICS_APISERVER") == "kube" {
		c = Up(t)
	} else {
		c = UpLitek8s(t)
	}
	k := kubectl{t: t, c: c}
	cs := clientset(t, c.Kubeconfig)
	node := c.Env["NODE_NAME"]
	image := c.Env["METRICS_SERVER_IMAGE"]
	if image == "" {
		t.Fatalf("%s/env has no METRICS_SERVER_IMAGE (a cluster from an older up.sh: run down.sh)", c.StateDir)
	}
	chart := metricsServerChart(t)
	helm := helmbin.Binary(t)
	home := t.TempDir()
	helmEnv := append(os.Environ(), "KUBECONFIG="+c.Kubeconfig,
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"), "HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"))

	waitNode(t, cs, node, 3*time.Minute, isReady)
	k.run("-n", "kube-system", "rollout", "status", "deployment/coredns", "--timeout=120s")

	start := time.Now()
	args := append([]string{"install", "metrics-server", chart, "-n", "kube-system", "--wait", "--timeout", "3m"},
		metricsServerArgs(image)...)
	out, err := runHelm(helmEnv, helm, 4*time.Minute, args...)
	t.Cleanup(func() {
		// A reused cluster (REALCLUSTER_KEEP) gets no second install.
		if out, err := runHelm(helmEnv, helm, 2*time.Minute, "uninstall", "metrics-server", "-n", "kube-system", "--wait"); err != nil {
			t.Logf("helm uninstall: %v\n%s", err, out)
		}
	})
	if err != nil {
		t.Fatalf("helm install: %v\n%s\npods:\n%s\nmetrics-server log:\n%s", err, out,
			k.run("-n", "kube-system", "get", "pods", "-o", "wide"), metricsServerLog(k))
	}
	t.Logf("helm install --wait: %s", time.Since(start).Round(time.Second))

	// The APIService becomes Available: the apiserver reached the pod.
	// (Not fatal: kubectl top below says more when it is not.)
	err = poll(2*time.Minute, func() error {
		st, err := k.try("get", "apiservice", "v1beta1.metrics.k8s.io", "-o",
			`jsonpath={.status.conditions[?(@.type=="Available")].status} {.status.conditions[?(@.type=="Available")].message}`)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(st, "True") {
			return fmt.Errorf("APIService v1beta1.metrics.k8s.io Available = %q", st)
		}
		return nil
	})
	if err != nil {
		t.Errorf("%v\n%s", err, k.run("get", "apiservice", "v1beta1.metrics.k8s.io", "-o", "yaml"))
	} else {
		t.Logf("APIService v1beta1.metrics.k8s.io Available after %s", time.Since(start).Round(time.Second))
	}

	// kubectl top: a row with cores and bytes for the node and for CoreDNS,
	// once metrics-server has scraped the kubelet twice (15 s resolution).
	nodeRow := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(node) + `\s+\d+m\s+\d+%\s+\d+Mi\s+\d+%`)
	podRow := regexp.MustCompile(`(?m)^coredns-[a-z0-9]+-[a-z0-9]+\s+\d+m\s+\d+Mi\s*$`)
	for _, q := range []struct {
		args []string
		want *regexp.Regexp
	}{
		{[]string{"top", "nodes"}, nodeRow},
		{[]string{"top", "pods", "-n", "kube-system"}, podRow},
	} {
		var last string
		err := poll(2*time.Minute, func() error {
			out, err := k.try(q.args...)
			last = out
			if err != nil {
				return err
			}
			if !q.want.MatchString(out) {
				return fmt.Errorf("no row matching %s", q.want)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("kubectl %s: %v; last output:\n%s\nmetrics-server log:\n%s", strings.Join(q.args, " "), err, last, metricsServerLog(k))
		}
		t.Logf("kubectl %s (after %s):\n%s", strings.Join(q.args, " "), time.Since(start).Round(time.Second), last)
	}

	// The same through the raw API the HPA uses.
	raw := k.run("get", "--raw", "/apis/metrics.k8s.io/v1beta1/nodes/"+node)
	var nm struct {
		Kind  string
		Usage map[string]string
	}
	if err := json.Unmarshal([]byte(raw), &nm); err != nil || nm.Kind != "NodeMetrics" || nm.Usage["cpu"] == "" || nm.Usage["memory"] == "" {
		t.Errorf("GET /apis/metrics.k8s.io/v1beta1/nodes/%s = %s (%v), want NodeMetrics with cpu and memory", node, raw, err)
	}
}

// metricsServerChart is the chart directory of sigs.k8s.io/metrics-server
// in the Go module cache (downloaded through the module proxy if absent).
func metricsServerChart(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", "sigs.k8s.io/metrics-server@"+MetricsServerVersion)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download sigs.k8s.io/metrics-server@%s: %v\n%s", MetricsServerVersion, err, out)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("go mod download -json: %v\n%s", err, out)
	}
	chart := filepath.Join(m.Dir, "charts", "metrics-server")
	if _, err := os.Stat(filepath.Join(chart, "Chart.yaml")); err != nil {
		t.Fatal(err)
	}
	return chart
}

func runHelm(env []string, helm string, timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, helm, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// metricsServerLog is the metrics-server pod's recent log, for failures.
func metricsServerLog(k kubectl) string {
	out, err := k.try("-n", "kube-system", "logs", "deployment/metrics-server", "--tail=30")
	if err != nil {
		return err.Error()
	}
	return out
}
