package member_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// runningPod creates a pod on node n1 and reports it Running and Ready.
func runningPod(t *testing.T, cs kubernetes.Interface, name string, labels map[string]string) {
	t.Helper()
	ctx := t.Context()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	p, err := cs.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if _, err := cs.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// withoutDisruptionController: these tests write the budgets' status
// themselves (internal/controllers/disruption computes it otherwise).
func withoutDisruptionController(cfg *member.Config) {
	cfg.Controllers.Disabled = append(cfg.Controllers.Disabled, "disruption")
}

// observedPDB creates a PDB and gives it the status a disruption
// controller would.
func observedPDB(t *testing.T, cs kubernetes.Interface, name string, app string, allowed, healthy, desired int32) {
	t.Helper()
	ctx := t.Context()
	one := intstr.FromInt32(1)
	pdb, err := cs.PolicyV1().PodDisruptionBudgets("default").Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: allowed,
		CurrentHealthy: healthy, DesiredHealthy: desired, ExpectedPods: healthy}
	if _, err := cs.PolicyV1().PodDisruptionBudgets("default").UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// evict posts an Eviction as client-go's Evict does, without retrying a
// 429 (client-go waits for its Retry-After, ten times).
func evict(ctx context.Context, cs kubernetes.Interface, name string, opts *metav1.DeleteOptions) error {
	ev := &policyv1.Eviction{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, DeleteOptions: opts}
	return cs.CoreV1().RESTClient().Post().MaxRetries(0).Namespace("default").Resource("pods").Name(name).
		SubResource("eviction").Body(ev).Do(ctx).Error()
}

// budgetCause is the DisruptionTarget cause of a refused eviction.
func budgetCause(err error) string {
	var se apierrors.APIStatus
	if !errors.As(err, &se) || se.Status().Details == nil {
		return ""
	}
	for _, c := range se.Status().Details.Causes {
		if c.Type == policyv1.DisruptionBudgetCause {
			return c.Message
		}
	}
	return ""
}

// TestEvictionHonoursPDBs evicts through a follower (forwarded to the
// leader): budgets are spent and recorded, refusals are kube's 429.
func TestEvictionHonoursPDBs(t *testing.T) {
	c := membertest.StartCluster(t, 3, withoutDisruptionController)
	cs := c.Clientset(c.Follower())
	ctx := t.Context()

	// A pending pod goes without consulting any budget.
	if _, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pending",
		Labels: map[string]string{"app": "web"}}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	observedPDB(t, cs, "web", "web", 1, 2, 1)
	if err := evict(ctx, cs, "pending", nil); err != nil {
		t.Fatalf("pending pod: %v", err)
	}
	if _, err := cs.CoreV1().Pods("default").Get(ctx, "pending", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("pending pod after eviction: %v", err)
	}

	runningPod(t, cs, "web-a", map[string]string{"app": "web"})
	runningPod(t, cs, "web-b", map[string]string{"app": "web"})

	// A dry run checks and changes nothing.
	if err := cs.PolicyV1().Evictions("default").Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "web-a", Namespace: "default"},
		DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}}); err != nil {
		t.Fatalf("dry run: %v", err)
	}
	if pdb, _ := cs.PolicyV1().PodDisruptionBudgets("default").Get(ctx, "web", metav1.GetOptions{}); pdb.Status.DisruptionsAllowed != 1 {
		t.Fatalf("a dry run spent the budget: %+v", pdb.Status)
	}

	grace := int64(1)
	if err := evict(ctx, cs, "web-a", &metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatalf("first eviction: %v", err)
	}
	pdb, err := cs.PolicyV1().PodDisruptionBudgets("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cond := apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
	if _, ok := pdb.Status.DisruptedPods["web-a"]; !ok || pdb.Status.DisruptionsAllowed != 0 || cond == nil ||
		cond.Reason != policyv1.InsufficientPodsReason {
		t.Fatalf("budget after the first eviction: %+v", pdb.Status)
	}
	pod, err := cs.CoreV1().Pods("default").Get(ctx, "web-a", metav1.GetOptions{})
	if err == nil { // still terminating (grace period 1 s)
		var target bool
		for _, c := range pod.Status.Conditions {
			target = target || c.Type == corev1.DisruptionTarget && c.Reason == "EvictionByEvictionAPI"
		}
		if pod.DeletionTimestamp == nil || !target || *pod.DeletionGracePeriodSeconds != 1 {
			t.Fatalf("evicted pod: deletion %v grace %v conditions %+v", pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds,
				pod.Status.Conditions)
		}
	} else if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}

	err = evict(ctx, cs, "web-b", nil)
	if !apierrors.IsTooManyRequests(err) || err.Error() != "Cannot evict pod as it would violate the pod's disruption budget." ||
		budgetCause(err) != "The disruption budget web does not allow evicting pods currently" {
		t.Fatalf("second eviction: %v (cause %q)", err, budgetCause(err))
	}
	if _, err := cs.CoreV1().Pods("default").Get(ctx, "web-b", metav1.GetOptions{}); err != nil {
		t.Fatalf("refused eviction deleted the pod: %v", err)
	}

	// A budget the controller has not seen yet: "still being processed".
	runningPod(t, cs, "db-a", map[string]string{"app": "db"})
	one := intstr.FromInt32(1)
	if _, err := cs.PolicyV1().PodDisruptionBudgets("default").Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "db"}, Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = evict(ctx, cs, "db-a", nil)
	if !apierrors.IsTooManyRequests(err) || budgetCause(err) != "The disruption budget db is still being processed by the server." {
		t.Fatalf("unobserved budget: %v (cause %q)", err, budgetCause(err))
	}

	// Two budgets: kube's 500.
	observedPDB(t, cs, "db2", "db", 1, 1, 0)
	if err := evict(ctx, cs, "db-a", nil); !apierrors.IsInternalError(err) || !strings.Contains(fmt.Sprint(err), "more than one PodDisruptionBudget") {
		t.Fatalf("two budgets: %v", err)
	}

	// Bad input: a name that is not the URL's.
	err = cs.CoreV1().RESTClient().Post().AbsPath("/api/v1/namespaces/default/pods/db-a/eviction").
		Body([]byte(`{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"other"}}`)).Do(ctx).Error()
	if !apierrors.IsBadRequest(err) || err.Error() != "name in URL does not match name in Eviction object" {
		t.Fatalf("mismatched name: %v", err)
	}
}

// TestKubectlDrain drains a node through a follower with real kubectl:
// cordon, evict every pod (honouring a budget that allows it), wait for
// them to be gone.
func TestKubectlDrain(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl not on PATH")
	}
	c := membertest.StartCluster(t, 3, withoutDisruptionController)
	f := c.Follower()
	cs := c.Clientset(f)
	ctx := t.Context()
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	runningPod(t, cs, "web-a", map[string]string{"app": "web"})
	runningPod(t, cs, "other", nil)
	observedPDB(t, cs, "web", "web", 1, 1, 0)
	finishDeletions(t, cs, "n1") // drain waits for the pods to be gone

	dir := t.TempDir()
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, "kubectl", "--kubeconfig", c.Kubeconfig(f), "--cache-dir", filepath.Join(dir, "cache"),
		"drain", "n1", "--force", "--grace-period=1", "--timeout=50s")
	cmd.Env = append(os.Environ(), "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl drain: %v\n%s", err, out)
	}
	for _, want := range []string{"node/n1 cordoned", "evicting pod default/web-a", "pod/web-a evicted", "pod/other evicted", "node/n1 drained"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("kubectl drain printed no %q:\n%s", want, out)
		}
	}
	node, err := cs.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if err != nil || !node.Spec.Unschedulable {
		t.Fatalf("node after drain: %v %v", node.Spec.Unschedulable, err)
	}
	membertest.Eventually(t, 10*time.Second, func() error {
		l, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) > 0 {
			return fmt.Errorf("pods left: %d, %v", len(l.Items), err)
		}
		return nil
	})
}

// finishDeletions plays node's kubelet until the test ends: a pod of
// node being deleted gets the final DELETE with gracePeriodSeconds=0 (the
// API keeps a bound pod Terminating until its kubelet sends it).
func finishDeletions(t *testing.T, cs kubernetes.Interface, node string) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			l, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
			if err != nil {
				continue
			}
			for _, p := range l.Items {
				if p.DeletionTimestamp != nil {
					zero := int64(0)
					_ = cs.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero,
						Preconditions: metav1.NewUIDPreconditions(string(p.UID))}) // gone or replaced: nothing to do
				}
			}
		}
	}()
}
