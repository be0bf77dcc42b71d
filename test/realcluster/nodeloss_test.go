package realcluster

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const lossNS = "nodeloss-test"

// Kube's defaults that the test observes.
const (
	// nodeGrace is the node monitor grace period (litek8s
	// nodelifecycle's, kube's --node-monitor-grace-period).
	nodeGrace = 40 * time.Second
	// defaultToleration is DefaultTolerationSeconds admission's 300 s.
	defaultToleration = 300 * time.Second
	// quickToleration is what the quick Deployment's pods tolerate the
	// unreachable taint for.
	quickToleration = 20 * time.Second
)

// TestNodeLoss kills the real node's kubelet (SIGKILL; its containers
// keep running) and checks kube's node-loss behaviour against litek8s:
// within the node monitor grace period the Node's Ready goes Unknown and
// it is tainted node.kubernetes.io/unreachable NoSchedule and NoExecute;
// pods that tolerate the taint for 20 s are evicted after 20 s, one with
// the default 300 s toleration (DefaultTolerationSeconds admission) only
// after 300 s; evicted pods stay Terminating (no kubelet confirms; the
// node still exists, so pod GC leaves them) while their Deployments'
// replacements run on the simulated node; a pod deleted meanwhile stays
// Terminating too. When the kubelet starts again, the node is Ready and
// untainted, and the Terminating pods are finished and gone.
func TestNodeLoss(t *testing.T) {
	c := UpLitek8s(t, SimulatedNodes(1))
	cs := clientset(t, c.Kubeconfig)
	waitNodes(t, c, cs)
	k := kubectl{t: t, c: c, verbose: true}
	node := c.Env["NODE_NAME"]
	k.run("create", "namespace", lossNS)

	// Everything starts on the real node: the simulated one is cordoned
	// until it has.
	k.run("cordon", simNode)
	k.apply(nodeLossWorkload(c.Env["BUSYBOX_IMAGE"]))
	k.run("-n", lossNS, "rollout", "status", "deployment/quick", "--timeout=120s")
	k.run("-n", lossNS, "rollout", "status", "deployment/patient", "--timeout=120s")
	k.run("-n", lossNS, "wait", "--for=condition=Ready", "pod/victim", "--timeout=120s")
	k.run("uncordon", simNode)
	k.run("-n", lossNS, "get", "pods", "-o", "wide")
	quick := podsOn(t, cs, lossNS, "app=quick")
	patient := podsOn(t, cs, lossNS, "app=patient")
	for _, p := range append(append([]corev1.Pod{}, quick...), patient...) {
		if p.Spec.NodeName != node {
			t.Fatalf("pod %s on %q, want %s", p.Name, p.Spec.NodeName, node)
		}
	}
	if len(quick) != 2 || len(patient) != 1 {
		t.Fatalf("pods: quick %s, patient %s", describePods(quick), describePods(patient))
	}
	if s := unreachableToleration(&patient[0]); s == nil || *s != int64(defaultToleration/time.Second) {
		t.Fatalf("pod %s tolerates unreachable for %v s, want the admission's default %v", patient[0].Name, s, defaultToleration)
	}

	c.StopComponent(t, "kubelet", true)
	killed := time.Now()

	// The Node goes Unknown and is tainted unreachable.
	var noExecute *corev1.Taint
	n := waitNode(t, cs, node, nodeGrace+50*time.Second, func(n *corev1.Node) error {
		noExecute = nil
		var noSchedule bool
		for i, tn := range n.Spec.Taints {
			if tn.Key == corev1.TaintNodeUnreachable {
				switch tn.Effect {
				case corev1.TaintEffectNoSchedule:
					noSchedule = true
				case corev1.TaintEffectNoExecute:
					noExecute = &n.Spec.Taints[i]
				}
			}
		}
		if readyStatus(n) != corev1.ConditionUnknown || !noSchedule || noExecute == nil || noExecute.TimeAdded == nil {
			return fmt.Errorf("node %s: %s; taints %v", n.Name, conditions(n), n.Spec.Taints)
		}
		return nil
	})
	after := time.Since(killed)
	t.Logf("%s after the kubelet was killed, node %s: %s; taints %v", after.Round(time.Second), node, conditions(n), n.Spec.Taints)
	if after < nodeGrace/2 {
		t.Errorf("node Unknown %s after the kubelet was killed, before its lease could expire (grace %s)", after, nodeGrace)
	}
	tainted := noExecute.TimeAdded.Time

	// As kube's node lifecycle controller does (MarkPodsNotReady), the
	// pods of the Unknown node are no longer Ready (so that Services stop
	// sending them traffic).
	if err := poll(30*time.Second, func() error {
		var ready []string
		for _, name := range []string{patient[0].Name, "victim"} {
			p, err := cs.CoreV1().Pods(lossNS).Get(t.Context(), name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if podReady(p) {
				ready = append(ready, name)
			}
		}
		if len(ready) > 0 {
			return fmt.Errorf("pods %v on the Unknown node are still Ready", ready)
		}
		return nil
	}); err != nil {
		t.Errorf("%v 30 s after the node went Unknown: kube's node lifecycle controller sets their Ready condition False (MarkPodsNotReady)", err)
	}

	// A pod deleted now stays Terminating: no kubelet confirms.
	k.run("-n", lossNS, "delete", "pod", "victim", "--wait=false")

	// The quick pods are evicted after 20 s and stay Terminating; their
	// replacements run on the simulated node.
	for _, p := range quick {
		evicted := waitEvicted(t, cs, p.Name, tainted.Add(quickToleration+40*time.Second))
		t.Logf("pod %s evicted %s after the taint was added", p.Name, evicted.Sub(tainted).Round(time.Second))
		if d := evicted.Sub(tainted); d < quickToleration-time.Second || d > quickToleration+15*time.Second {
			t.Errorf("pod %s evicted %s after the taint, want when its %s toleration ended", p.Name, d, quickToleration)
		}
	}
	waitReplaced(t, cs, "app=quick", 2)
	k.run("-n", lossNS, "get", "pods", "-o", "wide")

	// The patient pod is evicted only once its 300 s have passed;
	// meanwhile the victim and the evicted quick pods stay Terminating.
	deadline := tainted.Add(defaultToleration + 40*time.Second)
	var evicted time.Time
	for evicted.IsZero() && time.Now().Before(deadline) {
		p, err := cs.CoreV1().Pods(lossNS).Get(t.Context(), patient[0].Name, metav1.GetOptions{})
		switch {
		case err != nil:
			t.Fatalf("pod %s: %v (want it Terminating, not gone)", patient[0].Name, err)
		case p.DeletionTimestamp != nil:
			evicted = deletedAt(p)
			continue
		}
		for _, name := range []string{"victim", quick[0].Name, quick[1].Name} {
			if _, err := cs.CoreV1().Pods(lossNS).Get(t.Context(), name, metav1.GetOptions{}); err != nil {
				t.Fatalf("pod %s while its kubelet is down: %v; want it Terminating", name, err)
			}
		}
		time.Sleep(2 * time.Second)
	}
	if evicted.IsZero() {
		t.Fatalf("pod %s not evicted %s after the taint", patient[0].Name, time.Since(tainted).Round(time.Second))
	}
	d := evicted.Sub(tainted)
	t.Logf("pod %s evicted %s after the taint was added", patient[0].Name, d.Round(time.Second))
	if d < defaultToleration-time.Second || d > defaultToleration+15*time.Second {
		t.Errorf("pod %s evicted %s after the taint, want when its default %s toleration ended", patient[0].Name, d, defaultToleration)
	}
	checkEvicted(t, cs, patient[0].Name)
	waitReplaced(t, cs, "app=patient", 1)
	k.run("-n", lossNS, "get", "pods", "-o", "wide")
	v, err := cs.CoreV1().Pods(lossNS).Get(t.Context(), "victim", metav1.GetOptions{})
	if err != nil || v.DeletionTimestamp == nil || time.Since(v.DeletionTimestamp.Time) < time.Minute {
		t.Fatalf("pod victim, deleted minutes ago with a 5 s grace period: %v %v; want it still Terminating", err, v.DeletionTimestamp)
	}

	// The kubelet comes back: the node is Ready and untainted, and every
	// Terminating pod is finished and gone.
	c.StartComponent(t, "kubelet")
	back := time.Now()
	n = waitNode(t, cs, node, 2*time.Minute, func(n *corev1.Node) error {
		if err := isReady(n); err != nil {
			return err
		}
		for _, tn := range n.Spec.Taints {
			if tn.Key == corev1.TaintNodeUnreachable || tn.Key == corev1.TaintNodeNotReady {
				return fmt.Errorf("node %s Ready but still tainted %v", n.Name, n.Spec.Taints)
			}
		}
		return nil
	})
	t.Logf("%s after the kubelet started again, node %s: %s; taints %v", time.Since(back).Round(time.Second), node,
		conditions(n), n.Spec.Taints)
	gone := []string{"victim", patient[0].Name, quick[0].Name, quick[1].Name}
	eventually(t, 2*time.Minute, func() error {
		var left []string
		for _, name := range gone {
			_, err := cs.CoreV1().Pods(lossNS).Get(t.Context(), name, metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				left = append(left, fmt.Sprintf("%s (%v)", name, err))
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("still there: %s", strings.Join(left, ", "))
		}
		return nil
	})
	t.Logf("%s after the kubelet started again, the Terminating pods %v are gone", time.Since(back).Round(time.Second), gone)
	k.run("-n", lossNS, "get", "pods", "-o", "wide")
	if !running(c, "kubelet") {
		t.Errorf("the kubelet exited after its restart:\n%s", tail(c.LogFile("kubelet"), 20, "mirror pod"))
	}
}

// nodeLossWorkload: Deployment quick (2 pods tolerating the unreachable
// and not-ready taints for 20 s), Deployment patient (1 pod with the
// admission's default tolerations), both tolerating the simulated node,
// and the bare pod victim.
func nodeLossWorkload(image string) string {
	pod := func(indent, extraTolerations string) string {
		return strings.ReplaceAll(fmt.Sprintf(`terminationGracePeriodSeconds: 5
tolerations: [%s%s]
containers:
- name: main
  image: %s
  imagePullPolicy: Never
  command: [sleep, "3600"]
`, simToleration, extraTolerations, image), "\n", "\n"+indent)
	}
	quick := fmt.Sprintf(`, {key: %[1]s, operator: Exists, effect: NoExecute, tolerationSeconds: %[3]d},
        {key: %[2]s, operator: Exists, effect: NoExecute, tolerationSeconds: %[3]d}`,
		corev1.TaintNodeUnreachable, corev1.TaintNodeNotReady, int(quickToleration/time.Second))
	deployment := func(name string, replicas int, tolerations string) string {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      %[4]s
---
`, name, lossNS, replicas, pod("      ", tolerations))
	}
	return deployment("quick", 2, quick) + deployment("patient", 1, "") + fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: victim, namespace: %s}
spec:
  %s
`, lossNS, pod("  ", ""))
}

func readyStatus(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return ""
}

func unreachableToleration(p *corev1.Pod) *int64 {
	for _, tl := range p.Spec.Tolerations {
		if tl.Key == corev1.TaintNodeUnreachable && tl.Effect == corev1.TaintEffectNoExecute {
			return tl.TolerationSeconds
		}
	}
	return nil
}

// deletedAt is when the API took the pod's DELETE: its deletionTimestamp
// less its grace period (to the second).
func deletedAt(p *corev1.Pod) time.Time {
	at := p.DeletionTimestamp.Time
	if g := p.DeletionGracePeriodSeconds; g != nil {
		at = at.Add(-time.Duration(*g) * time.Second)
	}
	return at
}

// waitEvicted waits until pod name has a deletionTimestamp (no later than
// by), checks it was evicted as kube does, and returns when it was
// deleted.
func waitEvicted(t *testing.T, cs kubernetes.Interface, name string, by time.Time) time.Time {
	t.Helper()
	for {
		p, err := cs.CoreV1().Pods(lossNS).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("pod %s: %v (want it Terminating, not gone)", name, err)
		}
		if p.DeletionTimestamp != nil {
			checkEvicted(t, cs, name)
			return deletedAt(p)
		}
		if time.Now().After(by) {
			t.Fatalf("pod %s not evicted by %s", name, by.Format(time.TimeOnly))
		}
		time.Sleep(time.Second)
	}
}

// checkEvicted: the pod is Terminating with the taint manager's
// DisruptionTarget condition.
func checkEvicted(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	p, err := cs.CoreV1().Pods(lossNS).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil || p.DeletionTimestamp == nil {
		t.Fatalf("pod %s: %v; want it Terminating", name, err)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			t.Logf("pod %s Terminating (deletionTimestamp %s), %s=%s %s: %s", name, p.DeletionTimestamp.Format(time.TimeOnly),
				c.Type, c.Status, c.Reason, c.Message)
			if c.Status != corev1.ConditionTrue || c.Reason != "DeletionByTaintManager" {
				t.Errorf("pod %s DisruptionTarget %s %s, want True DeletionByTaintManager", name, c.Status, c.Reason)
			}
			return
		}
	}
	t.Errorf("pod %s evicted without a DisruptionTarget condition: %+v", name, p.Status.Conditions)
}

// waitReplaced waits until the selector has n Ready pods not being
// deleted, all on the simulated node.
func waitReplaced(t *testing.T, cs kubernetes.Interface, selector string, n int) {
	t.Helper()
	eventually(t, time.Minute, func() error {
		live := 0
		pods := podsOn(t, cs, lossNS, selector)
		for _, p := range pods {
			if p.DeletionTimestamp == nil && podReady(&p) && p.Spec.NodeName == simNode {
				live++
			}
		}
		if live != n {
			return fmt.Errorf("%s: %s; want %d Ready on %s", selector, describePods(pods), n, simNode)
		}
		return nil
	})
	t.Logf("%s replaced on %s: %s", selector, simNode, describePods(podsOn(t, cs, lossNS, selector)))
}
