package chart

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/litek8s/litek8s/internal/member/adminapi"
)

// statusOutput is what `ctl status -o json` prints (cmd/ctl's
// StatusOutput).
type statusOutput struct {
	Members []struct {
		adminapi.MemberInfo
		Status *adminapi.Status `json:"status"`
		Error  string           `json:"error"`
	} `json:"members"`
}

// Issue 7, acceptance 4: the StatefulSet's container, as rendered, runs
// as three local processes, one per ordinal. Each gets what Kubernetes
// would give it (pod_test.go): $(POD_NAME) and the namespace from the
// downward API, the tokens from the Secret, the ConfigMap as the file
// --config reads, a data directory for its PVC, its own loopback address
// for 0.0.0.0, and the peers' DNS names mapped to the others'. They form
// one cluster; `ctl status` (run with a member's env, as `kubectl exec
// <pod> -- ctl status` would) shows three ready members; the helm test's
// `ctl health` passes through the client Service's name; after the leader
// is SIGKILLed the other two keep serving reads and writes, and the member
// restarted with its data dir rejoins.
//
// The chart is rendered with leaderService.enabled=false and kubernetesAPI
// off: the leader label (node --leader-label), peers' Pod IPs and the
// scale-down cleanup call the Kubernetes API with in-cluster credentials
// (/var/run/secrets/kubernetes.io/serviceaccount), which a process outside
// Kubernetes does not have; internal/podlabel and internal/kubepeers test
// them, and test/install runs them on a real Kubernetes. The args are
// otherwise the default ones.
func TestStatefulSetAsProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 3 member processes")
	}
	nodeBin, ctlBin := binaries(t)
	kubectlPath(t)
	h := newHelm(t)
	ms := h.template(chartDir(t), "--set", "leaderService.enabled=false", "--set", "kubernetesAPI.peerPodIPs=false",
		"--set", "kubernetesAPI.removeScaledDownMembers=false", "--set", "backup.enabled=true", "--set", "backup.keep=2")
	sts := ms.statefulSet(t)
	n := int(*sts.Spec.Replicas)
	if n != 3 {
		t.Fatalf("default replicas %d, want 3", n)
	}
	ips := loopbackIPs(t, n)
	var rendered []int32
	for _, p := range sts.Spec.Template.Spec.Containers[0].Ports {
		rendered = append(rendered, p.ContainerPort)
	}
	ports := localPorts(t, ips, rendered)
	apiPort := ports["6443"]

	// What cluster DNS would answer: each member's stable name, and the
	// client Service (for the helm test Pod: one of the members).
	names := map[string]string{}
	cfg := ms.configMap(t, sts.Name+"-config").Data["config.yaml"]
	for i := range n {
		host := fmt.Sprintf("%s-%d.%s.%s.svc.cluster.local", sts.Name, i, sts.Spec.ServiceName, sts.Namespace)
		if !strings.Contains(cfg, host) {
			t.Fatalf("config.yaml does not name member %d as %s:\n%s", i, host, cfg)
		}
		names[host] = ips[i]
	}
	bins := map[string]string{"node": nodeBin, "ctl": ctlBin}
	root := t.TempDir()
	var claims []string
	for _, c := range sts.Spec.VolumeClaimTemplates {
		claims = append(claims, c.Name)
	}
	procs := make([]*proc, n)
	for i := range n {
		m := hostMap{names: names, bindIP: ips[i], ports: ports, bins: bins}
		procs[i] = podProcess(t, ms, sts.Spec.Template.Spec, claims, fmt.Sprintf("%s-%d", sts.Name, i), sts.Namespace, m, root)
		t.Logf("%s: %s %s", procs[i].name, filepath.Base(procs[i].path), strings.Join(procs[i].args, " "))
	}

	// podManagementPolicy Parallel: all at once, in any order.
	for _, i := range rand.Perm(n) {
		if err := procs[i].start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range procs {
		if err := p.waitServing(t.Context(), 2*time.Minute); err != nil {
			t.Fatal(err)
		}
		// Its data went to its "PVC".
		if _, err := os.Stat(filepath.Join(p.dir, "volumes", "data", "wal")); err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(procs[0].dir, "volumes", "config", "config.yaml")); err == nil {
		t.Logf("%s's config.yaml:\n%s", procs[0].name, b)
	}

	// `kubectl exec <pod> -- ctl ...`: ctl with the member container's env.
	ctl := func(p *proc, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, ctlBin, args...)
		cmd.Env, cmd.Dir = p.env, p.dir
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			err = fmt.Errorf("ctl %s on %s: %w: %s", strings.Join(args, " "), p.name, err, stderr.String())
		}
		return string(out), err
	}
	status := func(p *proc) (statusOutput, error) {
		out, err := ctl(p, "status", "-o", "json")
		var st statusOutput
		if jerr := json.Unmarshal([]byte(out), &st); jerr != nil {
			return st, errors.Join(err, jerr)
		}
		return st, err // exit 1 (a member unreachable) still prints the status
	}
	// allReady checks that st shows exactly the members of want (indexes
	// into procs), each ready at its advertised address, one leading.
	allReady := func(st statusOutput, want []int) error {
		var ids, ready []string
		leaders := 0
		for _, m := range st.Members {
			ids = append(ids, m.ID)
			if m.Status != nil && m.Status.Ready {
				ready = append(ready, m.ID)
			}
			if m.Leader {
				leaders++
			}
		}
		var wantIDs, wantReady []string
		for i := range procs {
			wantIDs = append(wantIDs, procs[i].name)
		}
		for _, i := range want {
			wantReady = append(wantReady, procs[i].name)
		}
		if !slices.Equal(ids, wantIDs) || !slices.Equal(ready, wantReady) || leaders != 1 {
			return fmt.Errorf("members %v, ready %v, %d leaders; want %v, ready %v, 1 leader", ids, ready, leaders, wantIDs, wantReady)
		}
		return nil
	}
	var st statusOutput
	if err := poll(t.Context(), time.Minute, func() (err error) {
		st, err = status(procs[0])
		if err != nil {
			return err
		}
		return allReady(st, []int{0, 1, 2})
	}); err != nil {
		t.Fatal(err)
	}
	leader := -1
	for i, m := range st.Members {
		if want := "https://" + ips[i] + ":" + apiPort; m.APIURL != want {
			t.Errorf("%s advertises %s, want %s", m.ID, m.APIURL, want)
		}
		if m.Leader {
			leader = i
		}
	}
	t.Logf("three ready members, %s leads", procs[leader].name)

	// The ServiceMonitor's target: plain-HTTP /metrics on the metrics port
	// of every member (once node has --metrics-addr).
	if help, _ := exec.CommandContext(t.Context(), nodeBin, "--help").CombinedOutput(); !strings.Contains(string(help), "--metrics-addr") {
		t.Log("node has no --metrics-addr yet: the metrics port is not checked")
	} else {
		for i, p := range procs {
			url := "http://" + ips[i] + ":" + ports["9090"] + "/metrics"
			if err := poll(t.Context(), 10*time.Second, func() error { return scrape(t, url) }); err != nil {
				t.Errorf("%s: %v", p.name, err)
			}
		}
	}

	// The helm test Pod: ctl health through the client Service's name.
	testPod := ms.get(t, "Pod", sts.Name+"-test-health").typed.(*corev1.Pod)
	clientHost := fmt.Sprintf("%s.%s.svc.cluster.local", sts.Name, sts.Namespace)
	tp := podProcess(t, ms, testPod.Spec, nil, sts.Name+"-test-health", sts.Namespace,
		hostMap{names: map[string]string{clientHost: ips[(leader+1)%n]}, ports: ports, bins: bins}, root)
	cmd := exec.CommandContext(t.Context(), tp.path, tp.args...)
	cmd.Env = tp.env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), ": ok") {
		t.Fatalf("the helm test's ctl health: %v\n%s", err, out)
	}

	// The backup CronJob's Pod, three times: each run saves a backup
	// through the client Service and keeps the newest two.
	runBackups(t, ms, sts.Namespace, hostMap{names: map[string]string{clientHost: ips[(leader+1)%n]}, ports: ports,
		bins: map[string]string{"node": nodeBin, "ctl": ctlBin, "sh": "/bin/sh"}}, root, ctlBin)

	// NOTES.txt: the admin kubeconfig from ctl kubeconfig.
	kc, err := ctl(procs[0], "kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(root, "admin.kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "kubectl-home")
	through := func(i int, stdin string, args ...string) (string, error) {
		return kubectl(t, home, kubeconfig, stdin, append([]string{"--server", "https://" + ips[i] + ":" + apiPort}, args...)...)
	}
	for i := range n {
		if out, err := through(i, "", "get", "ns", "default", "-o", "name"); err != nil || strings.TrimSpace(out) != "namespace/default" {
			t.Fatalf("kubectl get ns through %s: %q %v", procs[i].name, out, err)
		}
		// The names NOTES.txt has clients use verify against every
		// member's certificate: the client Service's, and localhost for a
		// port-forward.
		for _, name := range []string{clientHost, "localhost"} {
			if _, err := through(i, "", "--tls-server-name", name, "get", "ns", "default"); err != nil {
				t.Errorf("%s's certificate for %s: %v", procs[i].name, name, err)
			}
		}
	}

	// SIGKILL the leader: the two others elect a new one and keep serving.
	procs[leader].kill()
	t.Logf("killed %s (SIGKILL)", procs[leader].name)
	var survivors []int
	for i := range n {
		if i != leader {
			survivors = append(survivors, i)
		}
	}
	for _, i := range survivors {
		if err := poll(t.Context(), time.Minute, func() error {
			_, err := through(i, "", "get", "ns", "default")
			return err
		}); err != nil {
			t.Fatalf("reads through %s after the kill: %v", procs[i].name, err)
		}
		// A write; a retry after an unknown outcome may find it done.
		name := "after-kill-" + procs[i].name
		if err := poll(t.Context(), time.Minute, func() error {
			out, err := through(i, "", "create", "configmap", name, "-n", "default", "--from-literal=written=through-"+procs[i].name)
			if err != nil && strings.Contains(out, "AlreadyExists") {
				return nil
			}
			return err
		}); err != nil {
			t.Fatalf("write through %s after the kill: %v", procs[i].name, err)
		}
	}
	if err := poll(t.Context(), 30*time.Second, func() error {
		st, _ := status(procs[survivors[0]])
		for _, m := range st.Members {
			if m.ID == procs[leader].name && m.Error == "" {
				return fmt.Errorf("the killed %s is reachable?", m.ID)
			}
		}
		return allReady(st, survivors)
	}); err != nil {
		t.Fatalf("ctl status after the kill: %v", err)
	}

	// The killed member restarts with its data dir, the same command and
	// env: it rejoins and serves what was written while it was down.
	if err := procs[leader].start(); err != nil {
		t.Fatal(err)
	}
	if err := procs[leader].waitServing(t.Context(), 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := poll(t.Context(), time.Minute, func() error {
		st, err := status(procs[leader])
		if err != nil {
			return err
		}
		return allReady(st, []int{0, 1, 2})
	}); err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	for _, i := range survivors {
		out, err := through(leader, "", "get", "configmap", "after-kill-"+procs[i].name, "-n", "default",
			"-o", "jsonpath={.data.written}")
		if err != nil || out != "through-"+procs[i].name {
			t.Errorf("the restarted %s serves after-kill-%s = %q (%v)", procs[leader].name, procs[i].name, out, err)
		}
	}
}

// scrape GETs a metrics URL without credentials, as Prometheus does, and
// checks that it serves the member's series.
func scrape(t *testing.T, url string) error {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "litek8s_raft_state") {
		return fmt.Errorf("GET %s: %s, %d bytes without litek8s_raft_state", url, resp.Status, len(b))
	}
	return nil
}

// runBackups runs the backup CronJob's Pod of ms three times, as the
// kubelet would: its init container (ctl snapshot save through the client
// Service, with the Secret's admin token and CA), then its shell container
// (name the file, keep the newest backup.keep). The PVC is a directory
// that every run shares. Each backup left must pass ctl snapshot inspect,
// and only the newest backup.keep may be left.
func runBackups(t *testing.T, ms manifests, namespace string, m hostMap, root, ctlBin string) {
	t.Helper()
	cj := ms.get(t, "CronJob", release+"-litek8s-backup").typed.(*batchv1.CronJob)
	spec := cj.Spec.JobTemplate.Spec.Template.Spec.DeepCopy()
	for i := range spec.Volumes {
		if spec.Volumes[i].PersistentVolumeClaim != nil {
			spec.Volumes[i].VolumeSource = corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
		}
	}
	keep, err := strconv.Atoi(envVar(spec.Containers[0].Env, "KEEP").Value)
	if err != nil || len(spec.InitContainers) != 1 || len(spec.Containers) != 1 {
		t.Fatalf("backup Pod: KEEP %v, %d init containers, %d containers", err, len(spec.InitContainers), len(spec.Containers))
	}
	const pod = "backup" // one directory for every run: the PVC
	var names []string
	for run := range 3 {
		if run > 0 {
			time.Sleep(1100 * time.Millisecond) // the names have a second's resolution
		}
		for _, c := range []corev1.Container{spec.InitContainers[0], spec.Containers[0]} {
			one := *spec
			one.InitContainers, one.Containers = nil, []corev1.Container{c}
			p := podProcess(t, ms, one, nil, pod, namespace, m, root)
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			cmd := exec.CommandContext(ctx, p.path, p.args...)
			cmd.Env, cmd.Dir = p.env, p.dir
			out, err := cmd.CombinedOutput()
			cancel()
			if err != nil {
				t.Fatalf("backup run %d, container %s: %v\n%s", run, c.Name, err, out)
			}
			t.Logf("backup run %d, %s: %s", run, c.Name, strings.TrimSpace(string(out)))
			if c.Name == spec.Containers[0].Name {
				name, _, _ := strings.Cut(strings.TrimPrefix(string(out), "saved "), "\n")
				names = append(names, name)
			}
		}
	}
	dir := filepath.Join(root, pod, "volumes", "backup")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if want := names[len(names)-keep:]; !slices.Equal(left, want) {
		t.Fatalf("backups left %v, want the newest %d of %v", left, keep, names)
	}
	for _, f := range left {
		out, err := exec.CommandContext(t.Context(), ctlBin, "snapshot", "inspect", "-o", "json", filepath.Join(dir, f)).CombinedOutput()
		if err != nil || !strings.Contains(string(out), `"objects"`) {
			t.Errorf("ctl snapshot inspect %s: %v\n%s", f, err, out)
		}
	}
}
