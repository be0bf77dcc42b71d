package chart

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// litek8sAPI is one member process serving the Kubernetes API, the
// cluster the chart's manifests are sent to (as they would be to a real
// one).
type litek8sAPI struct {
	kubeconfig, home string
}

// startAPI starts a single member on 127.0.0.1 (ports picked by the
// system) with the namespace the chart renders into and the Prometheus
// Operator CRDs of testdata/monitoring-crds.yaml.
func startAPI(t *testing.T) litek8sAPI {
	t.Helper()
	nodeBin, _ := binaries(t)
	kubectlPath(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	p := &proc{t: t, name: "api", dir: dir, path: nodeBin, env: []string{"HOME=" + dir},
		args: []string{"--id", "api", "--data-dir", data, "--api-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0"}}
	if err := p.start(); err != nil {
		t.Fatal(err)
	}
	if err := p.waitServing(t.Context(), time.Minute); err != nil {
		t.Fatal(err)
	}
	api := litek8sAPI{kubeconfig: filepath.Join(data, "kubeconfig"), home: filepath.Join(dir, "kubectl-home")}
	// The leader creates the system namespaces just after it starts.
	if err := poll(t.Context(), 30*time.Second, func() error {
		_, err := api.kubectl(t, "", "get", "ns", "default")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	api.must(t, "", "create", "namespace", namespace)
	api.must(t, "", "apply", "-f", "testdata/monitoring-crds.yaml")
	api.must(t, "", "wait", "--for", "condition=Established", "--timeout", "30s",
		"crd/servicemonitors.monitoring.coreos.com", "crd/prometheusrules.monitoring.coreos.com")
	return api
}

func (a litek8sAPI) kubectl(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	return kubectl(t, a.home, a.kubeconfig, stdin, args...)
}

func (a litek8sAPI) must(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, err := a.kubectl(t, stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Issue 7, acceptance 3 (second half): the rendered manifests, with default
// and non-default values, pass `kubectl apply --dry-run=server` against
// litek8s: every object, the helm test's included, is admitted (defaults,
// validation, strict fields; the ServiceMonitor and PrometheusRule against
// the CRDs of testdata/monitoring-crds.yaml) and none is stored.
func TestServerSideDryRun(t *testing.T) {
	api := startAPI(t)
	h := newHelm(t)
	chart := chartDir(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"defaults", nil},
		{"non-default", []string{"-f", nonDefault}},
		{"monitoring on, 1 member, no leader Service, no PVC", []string{"--set", "replicas=1",
			"--set", "leaderService.enabled=false", "--set", "persistence.enabled=false",
			"--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.prometheusRule.enabled=true",
			"--set", "metrics.grafanaDashboard.enabled=true", "--set", "antiAffinity.type=none"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms := h.template(chart, tc.args...)
			out, err := api.kubectl(t, ms.yamlStream(), "apply", "--dry-run=server", "-f", "-")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for l := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
				if !strings.HasSuffix(l, " created (server dry run)") {
					t.Errorf("kubectl: %s", l)
				}
				got = append(got, l)
			}
			if len(got) != len(ms) {
				t.Errorf("%d objects admitted, %d rendered (%v):\n%s", len(got), len(ms), ms.ids(), out)
			}
			for _, kind := range []string{"statefulsets", "secrets", "servicemonitors.monitoring.coreos.com"} {
				if out := api.must(t, "", "get", kind, "-n", namespace, "-o", "name"); strings.TrimSpace(out) != "" {
					t.Errorf("a dry run stored %s", out)
				}
			}
		})
	}
}

// A real `helm install` into litek8s (no kubelet: the objects are stored,
// no Pod runs), then upgrades: the generated tokens survive an upgrade
// (the chart reads its Secret back with lookup) and scaling, a given token
// replaces the generated one, and uninstall keeps the Secret
// (helm.sh/resource-policy: keep) for the volumes that outlive the release.
// NOTES.txt tells how to get the kubeconfig with ctl.
func TestHelmInstallKeepsTokens(t *testing.T) {
	api := startAPI(t)
	h := newHelm(t)
	chart := chartDir(t)
	helm := func(args ...string) string {
		t.Helper()
		return h.must(append([]string{"--kubeconfig", api.kubeconfig, "--namespace", namespace}, args...)...)
	}
	tokens := func() (admin, join string) {
		t.Helper()
		get := func(key string) string {
			out := api.must(t, "", "get", "secret", "lk-litek8s-tokens", "-n", namespace, "-o", "jsonpath={.data."+key+"}")
			b, err := base64.StdEncoding.DecodeString(out)
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			return string(b)
		}
		return get("admin-token"), get("join-token")
	}
	checksum := func() string {
		t.Helper()
		return api.must(t, "", "get", "statefulset", "lk-litek8s", "-n", namespace,
			"-o", `jsonpath={.spec.template.metadata.annotations.checksum/config}`)
	}

	notes := helm("install", release, chart)
	for _, want := range []string{"kubectl -n litek8s exec lk-litek8s-0 -- ctl kubeconfig > litek8s.kubeconfig",
		"the leader removes the members above the new count from Raft", "helm -n litek8s test lk"} {
		if !strings.Contains(notes, want) {
			t.Errorf("NOTES lack %q:\n%s", want, notes)
		}
	}
	admin, join := tokens()
	if len(admin) < 32 || len(join) < 32 || admin == join {
		t.Fatalf("generated tokens %q, %q", admin, join)
	}
	sum := checksum()

	helm("upgrade", release, chart, "--set", "replicas=5")
	if a, j := tokens(); a != admin || j != join {
		t.Errorf("upgrade changed the tokens: %q %q, were %q %q", a, j, admin, join)
	}
	if got := checksum(); got != sum {
		t.Errorf("scaling changed checksum/config: %s, was %s", got, sum)
	}
	if out := api.must(t, "", "get", "statefulset", "lk-litek8s", "-n", namespace, "-o", "jsonpath={.spec.replicas}"); out != "5" {
		t.Errorf("replicas %s after the upgrade", out)
	}
	peers := api.must(t, "", "get", "configmap", "lk-litek8s-config", "-n", namespace, "-o", `jsonpath={.data.config\.yaml}`)
	if !strings.Contains(peers, "bootstrap-expect: 5") || !strings.Contains(peers, "lk-litek8s-4.lk-litek8s-peers") {
		t.Errorf("config after scaling to 5:\n%s", peers)
	}
	role := api.must(t, "", "get", "role", "lk-litek8s", "-n", namespace, "-o", "jsonpath={.rules[2].resourceNames}")
	if !strings.Contains(role, "lk-litek8s-4") {
		t.Errorf("the leader-label Role does not name the 5th member: %s", role)
	}

	helm("upgrade", release, chart, "--reuse-values", "--set", "auth.adminToken=given-admin-token")
	if a, j := tokens(); a != "given-admin-token" || j != join {
		t.Errorf("after giving the admin token: %q %q", a, j)
	}

	helm("uninstall", release)
	if out := api.must(t, "", "get", "secret", "-n", namespace, "-o", "name"); !slices.Contains(strings.Fields(out), "secret/lk-litek8s-tokens") {
		t.Errorf("uninstall deleted the tokens' Secret: %s", out)
	}
	if out := api.must(t, "", "get", "statefulsets,services,configmaps", "-n", namespace, "-o", "name", "-l",
		fmt.Sprintf("app.kubernetes.io/instance=%s", release)); strings.TrimSpace(out) != "" {
		t.Errorf("left after uninstall: %s", out)
	}
	// Installed again, the release finds the kept tokens.
	helm("install", release, chart)
	if a, j := tokens(); a != "given-admin-token" || j != join {
		t.Errorf("reinstall: tokens %q %q", a, j)
	}
}
