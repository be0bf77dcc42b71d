package disruption_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

const ns = "default"

func createPDB(t *testing.T, cs kubernetes.Interface, name string, minAvailable, maxUnavailable *intstr.IntOrString, app string) {
	t.Helper()
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: minAvailable, MaxUnavailable: maxUnavailable,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}
	if _, err := cs.PolicyV1().PodDisruptionBudgets(ns).Create(t.Context(), pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func ptr(v intstr.IntOrString) *intstr.IntOrString { return &v }

// want is a budget's expected status numbers and condition.
type want struct {
	expected, desired, healthy, allowed int32
	reason                              string
}

func waitStatus(t *testing.T, cs kubernetes.Interface, name string, w want) *policyv1.PodDisruptionBudget {
	t.Helper()
	var pdb *policyv1.PodDisruptionBudget
	membertest.Eventually(t, 30*time.Second, func() (err error) {
		if pdb, err = cs.PolicyV1().PodDisruptionBudgets(ns).Get(t.Context(), name, metav1.GetOptions{}); err != nil {
			return err
		}
		st := pdb.Status
		cond := apimeta.FindStatusCondition(st.Conditions, policyv1.DisruptionAllowedCondition)
		got := want{st.ExpectedPods, st.DesiredHealthy, st.CurrentHealthy, st.DisruptionsAllowed, ""}
		if cond != nil {
			got.reason = cond.Reason
		}
		if got != w || st.ObservedGeneration != pdb.Generation {
			return fmt.Errorf("budget %s: status %+v (generation %d), want %+v", name, st, pdb.Generation, w)
		}
		return nil
	})
	return pdb
}

func deployment(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
}

// readyPods returns the Ready pods of app that are not being deleted,
// by name, with their nodes.
func readyPods(ctx context.Context, cs kubernetes.Interface, app string) (map[string]string, error) {
	l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, p := range l.Items {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && p.DeletionTimestamp == nil {
				out[p.Name] = p.Spec.NodeName
			}
		}
	}
	return out, nil
}

func waitReady(t *testing.T, cs kubernetes.Interface, app string, n int) map[string]string {
	t.Helper()
	var pods map[string]string
	membertest.Eventually(t, 30*time.Second, func() (err error) {
		if pods, err = readyPods(t.Context(), cs, app); err != nil {
			return err
		}
		if len(pods) != n {
			return fmt.Errorf("%d ready pods of %s, want %d", len(pods), app, n)
		}
		return nil
	})
	return pods
}

func evict(ctx context.Context, cs kubernetes.Interface, name string) error {
	ev := &policyv1.Eviction{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	return cs.CoreV1().RESTClient().Post().MaxRetries(0).Namespace(ns).Resource("pods").Name(name).
		SubResource("eviction").Body(ev).Do(ctx).Error()
}

// TestDisruptionBudgets: the status of budgets over a Deployment on
// simulated nodes (3 members, driven through a follower), evictions that
// spend it, and kubectl drain evicting one pod at a time as the
// Deployment replaces them.
func TestDisruptionBudgets(t *testing.T) {
	c := membertest.StartCluster(t, 3, func(cfg *member.Config) {
		cfg.Controllers.Scheduling.SimNodes.Count = 2
		cfg.Controllers.Policy.Disruption.DeletionTimeout = 3 * time.Second
		cfg.Controllers.Policy.Disruption.StalePodDisruptionTimeout = 2 * time.Second
	})
	f := c.Follower()
	cs := c.Clientset(f)
	ctx := t.Context()
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment("web", 4), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReady(t, cs, "web", 4)

	createPDB(t, cs, "min-int", ptr(intstr.FromInt32(3)), nil, "web")
	createPDB(t, cs, "max-one", nil, ptr(intstr.FromInt32(1)), "web")
	createPDB(t, cs, "min-pct", ptr(intstr.FromString("60%")), nil, "web")
	createPDB(t, cs, "max-pct", nil, ptr(intstr.FromString("50%")), "web")
	createPDB(t, cs, "nothing", ptr(intstr.FromInt32(1)), nil, "none")
	waitStatus(t, cs, "min-int", want{expected: 4, desired: 3, healthy: 4, allowed: 1, reason: policyv1.SufficientPodsReason})
	waitStatus(t, cs, "max-one", want{expected: 4, desired: 3, healthy: 4, allowed: 1, reason: policyv1.SufficientPodsReason})
	// 60% of 4 is 2.4: 3 (rounded up).
	waitStatus(t, cs, "min-pct", want{expected: 4, desired: 3, healthy: 4, allowed: 1, reason: policyv1.SufficientPodsReason})
	waitStatus(t, cs, "max-pct", want{expected: 4, desired: 2, healthy: 4, allowed: 2, reason: policyv1.SufficientPodsReason})
	waitStatus(t, cs, "nothing", want{reason: policyv1.InsufficientPodsReason, desired: 1})

	// The Deployment's scale counts, not its pods: scaled to 6, the
	// expected pods follow.
	if _, err := cs.AppsV1().Deployments(ns).Patch(ctx, "web", "application/merge-patch+json", []byte(`{"spec":{"replicas":6}}`),
		metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, cs, "max-one", want{expected: 6, desired: 5, healthy: 6, allowed: 1, reason: policyv1.SufficientPodsReason})
	if _, err := cs.AppsV1().Deployments(ns).Patch(ctx, "web", "application/merge-patch+json", []byte(`{"spec":{"replicas":4}}`),
		metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReady(t, cs, "web", 4)
	// One budget per pod for evictions.
	for _, name := range []string{"min-int", "min-pct", "max-pct"} {
		if err := cs.PolicyV1().PodDisruptionBudgets(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitStatus(t, cs, "max-one", want{expected: 4, desired: 3, healthy: 4, allowed: 1, reason: policyv1.SufficientPodsReason})

	// Evictions: the first spends the budget, the second is refused until
	// the Deployment's replacement is Ready and the controller saw it.
	pods := waitReady(t, cs, "web", 4)
	var names []string
	for n := range pods {
		names = append(names, n)
	}
	if err := evict(ctx, cs, names[0]); err != nil {
		t.Fatalf("first eviction: %v", err)
	}
	if err := evict(ctx, cs, names[1]); !apierrors.IsTooManyRequests(err) {
		t.Fatalf("second eviction at once: %v, want 429", err)
	}
	pdb := waitStatus(t, cs, "max-one", want{expected: 4, desired: 3, healthy: 4, allowed: 1, reason: policyv1.SufficientPodsReason})
	if len(pdb.Status.DisruptedPods) != 0 {
		t.Errorf("disrupted pods kept after the pod went: %v", pdb.Status.DisruptedPods)
	}
	if err := evict(ctx, cs, names[1]); err != nil {
		t.Fatalf("second eviction once replaced: %v", err)
	}
	waitReady(t, cs, "web", 4)

	// An eviction whose pod was not deleted: the pod does not count as
	// healthy until the record expires (DeletionTimeout, 3 s here); a
	// record of a pod that is gone is dropped at once.
	pods = waitReady(t, cs, "web", 4)
	var kept string
	for n := range pods {
		kept = n
	}
	pdb, err := cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "max-one", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pdb.Status.DisruptedPods = map[string]metav1.Time{kept: metav1.Now(), "web-gone": metav1.Now()}
	if _, err := cs.PolicyV1().PodDisruptionBudgets(ns).UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pdb = waitStatus(t, cs, "max-one", want{expected: 4, desired: 3, healthy: 3, allowed: 0, reason: policyv1.InsufficientPodsReason})
	if _, ok := pdb.Status.DisruptedPods[kept]; !ok || len(pdb.Status.DisruptedPods) != 1 {
		t.Errorf("disrupted pods %v, want only %s", pdb.Status.DisruptedPods, kept)
	}
	pdb = waitStatus(t, cs, "max-one", want{expected: 4, desired: 3, healthy: 4, allowed: 1, reason: policyv1.SufficientPodsReason})
	if len(pdb.Status.DisruptedPods) != 0 {
		t.Errorf("expired disrupted pods kept: %v", pdb.Status.DisruptedPods)
	}
	membertest.Eventually(t, 10*time.Second, func() error {
		l, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + kept})
		if err != nil {
			return err
		}
		for _, e := range l.Items {
			if e.Reason == "NotDeleted" && e.Message == "Pod was expected by PDB default/max-one to be deleted but it wasn't" {
				return nil
			}
		}
		return fmt.Errorf("no NotDeleted event for %s", kept)
	})

	// A pod marked by an eviction but never deleted loses the mark.
	p, err := cs.CoreV1().Pods(ns).Get(ctx, kept, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget,
		Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting", LastTransitionTime: metav1.Now()})
	if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	membertest.Eventually(t, 15*time.Second, func() error {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, kept, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionFalse {
				return nil
			}
		}
		return fmt.Errorf("pod %s conditions %+v, want DisruptionTarget False", kept, p.Status.Conditions)
	})

	t.Run("kubectl drain", func(t *testing.T) { testDrain(t, c, f, cs) })
	c.SameObjects(ctx, "/apis/policy/v1/poddisruptionbudgets", "/api/v1/pods")
}

// testDrain drains the simulated node holding the most web pods with
// kubectl: evictions beyond the budget are refused (429, retried by
// kubectl) until the replacements run on the other node.
func testDrain(t *testing.T, c *membertest.Cluster, f int, cs kubernetes.Interface) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl not on PATH")
	}
	ctx := t.Context()
	// Put every pod on one node: cordon the other and restart them.
	if _, err := cs.CoreV1().Nodes().Patch(ctx, "sim-node-1", "application/merge-patch+json", []byte(`{"spec":{"unschedulable":true}}`),
		metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := waitReady(t, cs, "web", 4)
	for name, node := range pods {
		if node == "sim-node-1" {
			if err := cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	membertest.Eventually(t, 30*time.Second, func() error {
		pods, err := readyPods(ctx, cs, "web")
		if err != nil {
			return err
		}
		on0 := 0
		for _, node := range pods {
			if node == "sim-node-0" {
				on0++
			}
		}
		if on0 != 4 || len(pods) != 4 {
			return fmt.Errorf("pods %v, want 4 on sim-node-0", pods)
		}
		return nil
	})
	if _, err := cs.CoreV1().Nodes().Patch(ctx, "sim-node-1", "application/merge-patch+json", []byte(`{"spec":{"unschedulable":false}}`),
		metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, "kubectl", "--kubeconfig", c.Kubeconfig(f), "--cache-dir", filepath.Join(dir, "cache"),
		"drain", "sim-node-0", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=80s")
	cmd.Env = append(os.Environ(), "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl drain: %v\n%s", err, out)
	}
	for _, w := range []string{"node/sim-node-0 cordoned", "evicting pod default/web-", "(will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.",
		"node/sim-node-0 drained"} {
		if !strings.Contains(string(out), w) {
			t.Errorf("kubectl drain printed no %q:\n%s", w, out)
		}
	}
	if n := strings.Count(string(out), "evicted\n"); n != 4 {
		t.Errorf("kubectl drain evicted %d pods, want 4:\n%s", n, out)
	}
	pods = waitReady(t, cs, "web", 4)
	for name, node := range pods {
		if node != "sim-node-1" {
			t.Errorf("pod %s on %s after the drain", name, node)
		}
	}
	waitStatus(t, cs, "max-one", want{expected: 4, desired: 3, healthy: 4, allowed: 1, reason: policyv1.SufficientPodsReason})
}
