package realcluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

const testNS = "realcluster-test"

// TestRealCluster brings the cluster up, checks the node, DNS, a ClusterIP,
// a StatefulSet pod's name behind a headless Service, a volume written by
// UID 65532 that outlives its pod and goes away with its claim, then runs
// down.sh and checks that nothing is left.
func TestRealCluster(t *testing.T) {
	c := Up(t)
	k := kubectl{t: t, c: c}

	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	node, err := cs.CoreV1().Nodes().Get(t.Context(), c.Env["NODE_NAME"], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !nodeReady(node) {
		t.Fatalf("node %s is not Ready: %+v", node.Name, node.Status.Conditions)
	}
	if n := node.Status.Allocatable.Pods().Value(); n < 110 {
		t.Errorf("node allocatable pods = %d, want >= 110", n)
	}
	if len(node.Spec.Taints) != 0 {
		t.Errorf("node taints = %v, want none", node.Spec.Taints)
	}

	k.apply(workload(c.Env["BUSYBOX_IMAGE"]))
	k.run("-n", testNS, "rollout", "status", "statefulset/web", "--timeout=120s")
	svcIP := k.run("-n", testNS, "get", "service", "web-svc", "-o", "jsonpath={.spec.clusterIP}")

	out := k.client("client-1", svcIP)
	t.Logf("client-1 (web-svc ClusterIP %s):\n%s", svcIP, out)
	for _, want := range []string{"uid=65532", "starts=1", "svc=ok", "pod=ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("client-1 output lacks %q:\n%s", want, out)
		}
	}

	// The volume is a host directory; the file is the pod's UID's.
	pv := k.run("-n", testNS, "get", "pvc", "data-web-0", "-o", "jsonpath={.spec.volumeName}")
	dir := filepath.Join(c.StateDir, "volumes", pv)
	st, err := os.Stat(filepath.Join(dir, "starts"))
	if err != nil {
		t.Fatal(err)
	}
	if uid := st.Sys().(*syscall.Stat_t).Uid; uid != 65532 {
		t.Errorf("%s/starts owned by %d, want 65532", dir, uid)
	}

	// A new pod for the same claim sees the data.
	k.run("-n", testNS, "delete", "pod", "web-0", "--wait=true")
	eventually(t, 2*time.Minute, func() error {
		_, err := k.try("-n", testNS, "wait", "--for=condition=Ready", "pod/web-0", "--timeout=5s")
		return err
	})
	out = k.client("client-2", svcIP)
	t.Logf("client-2, after web-0 was recreated:\n%s", out)
	if !strings.Contains(out, "starts=2") {
		t.Errorf("after the pod was recreated, client-2 output lacks starts=2:\n%s", out)
	}

	// Deleting the claim deletes the volume and its directory.
	k.run("-n", testNS, "delete", "statefulset", "web", "--wait=true")
	k.run("-n", testNS, "delete", "pvc", "data-web-0", "--wait=true")
	eventually(t, time.Minute, func() error {
		if _, err := k.try("get", "pv", pv); err == nil {
			return fmt.Errorf("pv %s still exists", pv)
		}
		if _, err := os.Stat(dir); err == nil {
			return fmt.Errorf("%s still exists", dir)
		}
		return nil
	})

	t.Logf("pvc data-web-0 deleted: pv %s and %s are gone", pv, dir)

	c.Down(t)
	if left := Leftovers(c.StateDir); len(left) != 0 {
		t.Errorf("down.sh left:\n%s", strings.Join(left, "\n"))
	}
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// workload is a StatefulSet of one busybox httpd running as 65532 with a
// read-only root, RuntimeDefault seccomp and a 10Gi claim (the litek8s
// chart's pod security settings), a headless Service for its pod names and
// a ClusterIP Service in front of it.
func workload(image string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: %[1]s}
spec:
  clusterIP: None
  selector: {app: web}
  ports: [{name: http, port: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: web-svc, namespace: %[1]s}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: %[1]s}
spec:
  serviceName: web
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        runAsGroup: 65532
        fsGroup: 65532
        fsGroupChangePolicy: OnRootMismatch
        seccompProfile: {type: RuntimeDefault}
      containers:
      - name: web
        image: %[2]s
        imagePullPolicy: Never
        command: [sh, -c, 'echo "uid=$(id -u)" > /data/uid && echo start >> /data/starts && exec httpd -f -p 8080 -h /data']
        securityContext: {readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
        readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
        volumeMounts: [{name: data, mountPath: /data}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 10Gi}}
`, testNS, image)
}

// kubectl runs the cluster's kubectl with its admin kubeconfig (or
// kubeconfig, when set); with verbose, it logs every command and its
// output.
type kubectl struct {
	t          testing.TB
	c          *Cluster
	kubeconfig string
	verbose    bool
}

// command is kubectl with the kubeconfig and args, not started.
func (k kubectl) command(ctx context.Context, args ...string) *exec.Cmd {
	kc := k.kubeconfig
	if kc == "" {
		kc = k.c.Kubeconfig
	}
	return exec.CommandContext(ctx, k.c.Kubectl(), append([]string{"--kubeconfig", kc}, args...)...)
}

func (k kubectl) try(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := k.command(ctx, args...).CombinedOutput()
	if k.verbose {
		k.t.Logf("$ kubectl %s (%v)\n%s", strings.Join(args, " "), err, out)
	}
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

func (k kubectl) run(args ...string) string {
	k.t.Helper()
	out, err := k.try(args...)
	if err != nil {
		k.t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

func (k kubectl) apply(manifest string) {
	k.t.Helper()
	f := filepath.Join(k.t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(f, []byte(manifest), 0o644); err != nil {
		k.t.Fatal(err)
	}
	k.run("apply", "-f", f)
}

// client runs a busybox pod (its wget -T segfaults, hence timeout) that
// resolves web-svc, fetches /uid through its
// name, /starts through its ClusterIP and through web-0's headless name,
// and returns its log.
func (k kubectl) client(name, svcIP string) string {
	k.t.Helper()
	// A pod's name behind the headless Service resolves once the
	// EndpointSlice controller has the pod Ready in the Service's slice and
	// CoreDNS's watch has that slice: after "kubectl wait" a recreated
	// web-0 may still be missing for a moment (NXDOMAIN, cached by CoreDNS
	// for 5 s), so the client asks again for up to 30 s, as any client of
	// a StatefulSet's pod names must.
	script := fmt.Sprintf(`set -e
nslookup web-svc.%[1]s.svc.cluster.local
timeout 30 sh -c 'until nslookup web-0.web.%[1]s.svc.cluster.local >/dev/null 2>&1; do sleep 1; done'
nslookup web-0.web.%[1]s.svc.cluster.local
timeout 10 wget -q -O- http://web-svc/uid
echo "starts=$(timeout 10 wget -q -O- http://%[2]s/starts | grep -c start)"
timeout 10 wget -q -O /dev/null http://web-svc.%[1]s.svc.cluster.local/starts && echo svc=ok
timeout 10 wget -q -O /dev/null http://web-0.web.%[1]s.svc.cluster.local:8080/starts && echo pod=ok
`, testNS, svcIP)
	k.apply(fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: %s}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 0
  securityContext: {runAsUser: 65532, runAsGroup: 65532, runAsNonRoot: true}
  containers:
  - name: client
    image: %s
    imagePullPolicy: Never
    command: [sh, -c, %q]
`, name, testNS, k.c.Env["BUSYBOX_IMAGE"], script))
	var phase string
	eventually(k.t, 2*time.Minute, func() error {
		phase = k.run("-n", testNS, "get", "pod", name, "-o", "jsonpath={.status.phase}")
		if phase != "Succeeded" && phase != "Failed" {
			return fmt.Errorf("pod %s is %q", name, phase)
		}
		return nil
	})
	logs := k.run("-n", testNS, "logs", name)
	if phase != "Succeeded" {
		k.t.Fatalf("pod %s %s:\n%s", name, phase, logs)
	}
	return logs
}

// eventually polls f every second until it returns nil or d has passed.
func eventually(t testing.TB, d time.Duration, f func() error) {
	t.Helper()
	membertest.EventuallyEvery(t, d, time.Second, f)
}
