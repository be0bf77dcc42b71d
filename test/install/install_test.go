package install

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/litek8s/litek8s/test/fault"
	"github.com/litek8s/litek8s/test/realcluster"
)

const release = "lk"

// image builds the litek8s image with hack/image.sh at version and
// returns its archive.
func image(t *testing.T, out, version string) (ref, archive string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "../../hack/image.sh")
	cmd.Env = append(os.Environ(), "OUT="+out, "VERSION="+version)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hack/image.sh: %v\n%s", err, b)
	}
	t.Logf("hack/image.sh (VERSION=%s):\n%s", version, b)
	m := regexp.MustCompile(`(?m)^image: (\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("hack/image.sh printed no image line")
	}
	return string(m[1]), filepath.Join(out, "litek8s-"+version+".tar")
}

// appVersion is the chart's appVersion.
func appVersion(t *testing.T) string {
	b, err := os.ReadFile("../../charts/litek8s/Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^appVersion: *"?([^"\s]+)"?`).FindSubmatch(b)
	if m == nil {
		t.Fatal("Chart.yaml has no appVersion")
	}
	return string(m[1])
}

func members(n int) []string {
	var ids []string
	for i := range n {
		ids = append(ids, fmt.Sprintf("%s-litek8s-%d", release, i))
	}
	return ids
}

// Issue 14: the chart installed with the image on a real Kubernetes, and
// everything a user then does to it, under a write load that loses
// nothing acknowledged.
func TestHelmInstall(t *testing.T) {
	testHelmInstall(t, realcluster.Up(t))
}

// TestHelmInstallOnLitek8s is TestHelmInstall with litek8s as the host:
// three litek8s members in place of etcd, kube-apiserver and the
// controllers, the same kubelet, kube-proxy and CoreDNS. The hosted
// members find each other through the host's API, as on any Kubernetes.
func TestHelmInstallOnLitek8s(t *testing.T) {
	c := realcluster.UpLitek8s(t)
	h := newHost(t, c)
	// UpLitek8s returns once the members serve; the node and CoreDNS are
	// the test's to wait for.
	h.mustKubectl("wait", "--for=condition=Ready", "node", "--all", "--timeout=150s")
	h.mustKubectl("-n", "kube-system", "rollout", "status", "deployment/coredns", "--timeout=150s")
	testHelmInstall(t, c)
}

func testHelmInstall(t *testing.T, c *realcluster.Cluster) {
	h := newHost(t, c)
	version := appVersion(t)
	out := t.TempDir()
	_, archive := image(t, out, version)
	next := version + "-next"
	_, nextArchive := image(t, out, next)
	c.LoadImage(t, archive)
	c.LoadImage(t, nextArchive)

	ns := fmt.Sprintf("litek8s-%d", rand.N(100000))
	t.Cleanup(func() {
		h := h.detached()
		if t.Failed() {
			for _, args := range [][]string{{"get", "pods,pvc,svc,endpointslices", "-o", "wide"},
				{"get", "events", "--sort-by=.lastTimestamp"}} {
				o, _ := h.kubectl(append([]string{"-n", ns}, args...)...)
				t.Logf("kubectl %s:\n%s", strings.Join(args, " "), o)
			}
			for _, p := range members(5) {
				o, _ := h.kubectl("-n", ns, "logs", p, "--tail", "40")
				t.Logf("%s log:\n%s", p, o)
			}
		}
		h.helm("uninstall", release, "-n", ns, "--wait", "--timeout", "2m")
		h.kubectl("delete", "namespace", ns, "--wait", "--timeout", "3m")
	})
	chart, err := filepath.Abs("../../charts/litek8s")
	if err != nil {
		t.Fatal(err)
	}
	// One node: members may share it (antiAffinity none); the image is
	// imported, never pulled.
	values := []string{"--set", "antiAffinity.type=none", "--set", "image.pullPolicy=Never"}

	// Install: time to a ready cluster.
	start := time.Now()
	notes := h.mustHelm(append([]string{"install", release, chart, "-n", ns, "--create-namespace", "--wait", "--timeout", "5m"},
		values...)...)
	want := members(3)
	var leader string
	eventually(t, 2*time.Minute, func() (err error) {
		st, err := h.ctlStatus(ns, want[0])
		if err != nil {
			return err
		}
		leader, err = healthy(st, want)
		return err
	})
	ready := time.Since(start)
	t.Logf("helm install → 3 pods Ready, one Raft cluster of 3 ready voters: %s", ready.Round(100*time.Millisecond))
	if !strings.Contains(notes, "ctl kubeconfig") {
		t.Errorf("NOTES.txt does not say how to get a kubeconfig:\n%s", notes)
	}
	for _, p := range want {
		if img := h.mustKubectl("-n", ns, "get", "pod", p, "-o", "jsonpath={.spec.containers[0].image}"); !strings.HasSuffix(img, ":"+version) {
			t.Errorf("%s runs %s, want tag %s", p, img, version)
		}
	}

	// helm test: ctl health through the client Service, verifying the
	// member with the CA of the release's Secret.
	testOut := h.mustHelm("test", release, "-n", ns, "--logs", "--timeout", "2m")
	if !strings.Contains(testOut, "Phase:          Succeeded") && !strings.Contains(testOut, "Succeeded") {
		t.Errorf("helm test:\n%s", testOut)
	}
	t.Logf("helm test:\n%s", testOut)

	// The admin kubeconfig, as NOTES.txt says, pointed at the client
	// Service's ClusterIP from this host (kube-proxy routes it), the
	// certificate checked for the Service's name.
	kcPath := filepath.Join(t.TempDir(), "litek8s.kubeconfig")
	kc := h.mustKubectl("-n", ns, "exec", want[0], "-c", "node", "--", "ctl", "kubeconfig")
	if err := os.WriteFile(kcPath, []byte(kc+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	svcIP := h.mustKubectl("-n", ns, "get", "svc", release+"-litek8s", "-o", "jsonpath={.spec.clusterIP}")
	userKubectl := func(args ...string) (string, error) {
		return run(t.Context(), time.Minute, append(os.Environ(), "KUBECONFIG="+kcPath), "kubectl", args...)
	}
	cluster := strings.TrimSpace(mustRun(t, userKubectl, "config", "view", "-o", "jsonpath={.clusters[0].name}"))
	mustRun(t, userKubectl, "config", "set-cluster", cluster, "--server=https://"+svcIP+":6443",
		"--tls-server-name="+release+"-litek8s."+ns+".svc")
	t.Logf("kubectl get ns (litek8s through its client Service):\n%s", mustRun(t, userKubectl, "get", "ns"))
	mustRun(t, userKubectl, "create", "configmap", "from-the-host", "--from-literal=a=b")
	userHelm := func(args ...string) (string, error) {
		return run(t.Context(), 3*time.Minute, append(slices.Clone(h.helmEnv), "KUBECONFIG="+kcPath), h.helmBin, args...)
	}
	// (its hooks wait for a Job, and litek8s runs no pods here)
	mustRun(t, userHelm, "install", "demo", "../clients/testdata/charts/demo", "-n", "demo", "--create-namespace", "--no-hooks")
	if l := mustRun(t, userHelm, "list", "-A"); !strings.Contains(l, "deployed") {
		t.Errorf("helm list against litek8s:\n%s", l)
	}
	mustRun(t, userHelm, "uninstall", "demo", "-n", "demo", "--no-hooks")

	// The write load, through the client Service, from now on.
	rc, err := clientcmd.BuildConfigFromFlags("", kcPath)
	if err != nil {
		t.Fatal(err)
	}
	ld, err := startLoad(t.Context(), rc, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer ld.stop()
	// failover logs, for a disruption at t0, how long until the first
	// write started after it was acknowledged, and (once the cluster is
	// whole again) the longest time without an acknowledged write.
	failover := func(what string, t0 time.Time) {
		t.Helper()
		d, err := ld.firstAckAfter(t.Context(), t0, 2*time.Minute)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		t.Logf("%s: first acknowledged write %s after", what, d.Round(10*time.Millisecond))
	}
	gap := func(what string, t0 time.Time) {
		t.Logf("%s: longest time without an acknowledged write from the disruption until healthy again: %s", what,
			ld.hist.LongestAckGap(t0, time.Now()).Round(10*time.Millisecond))
	}
	waitHealthy := func(what string, want []string) {
		t.Helper()
		eventually(t, 4*time.Minute, func() (err error) {
			st, err := h.ctlStatus(ns, want[0])
			if err != nil {
				return err
			}
			leader, err = healthy(st, want)
			return err
		})
		t.Logf("%s: members %v healthy, %s leads", what, want, leader)
	}
	if _, err := ld.firstAckAfter(t.Context(), time.Now(), time.Minute); err != nil {
		t.Fatalf("the load: %v", err)
	}

	// The leader's Pod deleted: the StatefulSet recreates it, it rejoins
	// from its PVC.
	t0 := time.Now()
	h.mustKubectl("-n", ns, "delete", "pod", leader, "--wait=false")
	failover("kubectl delete pod "+leader+" (the leader)", t0)
	waitPodReady(t, h, ns, leader, t0)
	waitHealthy("after the leader's Pod was recreated", want)
	gap("the leader's Pod deleted", t0)

	// A follower force-deleted.
	follower := want[0]
	if follower == leader {
		follower = want[1]
	}
	t0 = time.Now()
	h.mustKubectl("-n", ns, "delete", "pod", follower, "--force", "--grace-period=0")
	failover("kubectl delete pod --force --grace-period=0 "+follower+" (a follower)", t0)
	waitPodReady(t, h, ns, follower, t0)
	waitHealthy("after the follower was force-deleted", want)
	gap("a follower's Pod force-deleted", t0)

	// A new image tag: a rolling update, highest ordinal first; a leader
	// hands leadership over on SIGTERM.
	t0 = time.Now()
	h.mustHelm(append([]string{"upgrade", release, chart, "-n", ns, "--reuse-values", "--set", "image.tag=" + next,
		"--wait", "--timeout", "8m"}, values...)...)
	eventually(t, 4*time.Minute, func() error {
		for _, p := range want {
			img := h.mustKubectl("-n", ns, "get", "pod", p, "-o", "jsonpath={.spec.containers[0].image}")
			if !strings.HasSuffix(img, ":"+next) {
				return fmt.Errorf("%s runs %s", p, img)
			}
		}
		return nil
	})
	waitHealthy("after helm upgrade to "+next, want)
	st, err := h.ctlStatus(ns, want[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range st.Members {
		if m.Status.Version != next {
			t.Errorf("%s reports version %s after the upgrade, want %s", m.ID, m.Status.Version, next)
		}
	}
	t.Logf("helm upgrade to %s (rolling, under load) took %s; longest gap between acknowledged writes %s", next,
		time.Since(t0).Round(100*time.Millisecond), ld.hist.LongestAckGap(t0, time.Now()).Round(10*time.Millisecond))

	// 3 → 5: two members join.
	h.mustHelm(append([]string{"upgrade", release, chart, "-n", ns, "--reuse-values", "--set", "replicas=5",
		"--wait", "--timeout", "5m"}, values...)...)
	waitHealthy("helm upgrade --set replicas=5", members(5))

	// 5 → 3: the leader removes the two members the StatefulSet lost.
	h.mustHelm(append([]string{"upgrade", release, chart, "-n", ns, "--reuse-values", "--set", "replicas=3",
		"--wait", "--timeout", "5m"}, values...)...)
	waitHealthy("helm upgrade --set replicas=3 (no dead voter left)", want)

	// Prometheus on the host discovers the member Pods through the
	// Kubernetes API and scrapes each.
	checkPrometheus(t, h, ns, len(want))

	// Stop the load; every acknowledged write is on every member.
	ld.stop()
	states := map[string]fault.State{}
	for _, p := range want {
		cfg, err := memberConfig(h, rc, ns, p)
		if err != nil {
			t.Fatal(err)
		}
		if states[p], err = state(t.Context(), cfg); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	ok, failed, unknown := ld.hist.Counts()
	if v := ld.hist.Check(states); len(v) > 0 {
		t.Errorf("%d violations of the history, e.g.:\n%s", len(v), strings.Join(v[:min(len(v), 20)], "\n"))
	}
	t.Logf("checked %d writes: %d acknowledged (0 lost: each on all %d members), %d refused, %d with an unknown outcome",
		ok+failed+unknown, ok, len(want), failed, unknown)

	// Uninstall keeps the PVCs (and the Secret), as documented.
	h.mustHelm("uninstall", release, "-n", ns, "--wait", "--timeout", "3m")
	pvcs := strings.Fields(h.mustKubectl("-n", ns, "get", "pvc", "-o", "jsonpath={.items[*].metadata.name}"))
	for _, p := range members(5) {
		if !slices.Contains(pvcs, "data-"+p) {
			t.Errorf("PVC data-%s is gone after helm uninstall (have %v)", p, pvcs)
		}
	}
	t.Logf("after helm uninstall: PVCs %v kept", pvcs)
}

func mustRun(t *testing.T, f func(args ...string) (string, error), args ...string) string {
	t.Helper()
	out, err := f(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// waitPodReady waits until pod is a new Pod (created after t0) and Ready.
func waitPodReady(t *testing.T, h *host, ns, pod string, t0 time.Time) {
	t.Helper()
	eventually(t, 4*time.Minute, func() error {
		out, err := h.kubectl("-n", ns, "get", "pod", pod, "-o",
			`jsonpath={.metadata.creationTimestamp} {.status.conditions[?(@.type=="Ready")].status}`)
		if err != nil {
			return err
		}
		f := strings.Fields(out)
		if len(f) != 2 {
			return fmt.Errorf("pod %s: %q", pod, out)
		}
		created, err := time.Parse(time.RFC3339, f[0])
		if err != nil {
			return err
		}
		if created.Before(t0.Truncate(time.Second)) || f[1] != "True" {
			return fmt.Errorf("pod %s created %s, ready %s", pod, f[0], f[1])
		}
		return nil
	})
}

// memberConfig is cfg aimed at one member's Pod IP, its certificate
// checked for the member's stable name.
func memberConfig(h *host, cfg *rest.Config, ns, pod string) (*rest.Config, error) {
	ip, err := h.kubectl("-n", ns, "get", "pod", pod, "-o", "jsonpath={.status.podIP}")
	if err != nil {
		return nil, err
	}
	c := rest.CopyConfig(cfg)
	c.Host = "https://" + strings.TrimSpace(ip) + ":6443"
	c.TLSClientConfig.ServerName = pod + "." + release + "-litek8s-peers." + ns + ".svc.cluster.local"
	c.Timeout = 30 * time.Second
	return c, nil
}
