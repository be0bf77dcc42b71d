package scheduler_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// fastRetries makes unschedulable pods come back quickly.
func fastRetries(cfg *member.Config) {
	cfg.Controllers.Scheduling.Scheduler.BackoffBase = 50 * time.Millisecond
	cfg.Controllers.Scheduling.Scheduler.BackoffMax = 500 * time.Millisecond
}

// createNode registers a Ready node with cpu cores and 8Gi, as a kubelet
// would (the node lifecycle controller then lifts the not-ready taint
// the API puts on new nodes).
func createNode(t *testing.T, cs kubernetes.Interface, name string, cpu int64, labels map[string]string) {
	t.Helper()
	l := map[string]string{"kubernetes.io/hostname": name}
	for k, v := range labels {
		l[k] = v
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
	if _, err := cs.CoreV1().Nodes().Create(t.Context(), n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	alloc := corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(cpu, resource.DecimalSI),
		corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}
	// The node lifecycle controller updates the node too: retry conflicts.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := cs.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status = corev1.NodeStatus{Capacity: alloc, Allocatable: alloc, Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}}
		_, err = cs.CoreV1().Nodes().UpdateStatus(t.Context(), n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func createPod(t *testing.T, cs kubernetes.Interface, ns, name string, milliCPU int64, adjust ...func(*corev1.Pod)) {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "c", Image: "busybox"}}}}
	if milliCPU > 0 {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{
			corev1.ResourceCPU: *resource.NewMilliQuantity(milliCPU, resource.DecimalSI)}
	}
	for _, a := range adjust {
		a(p)
	}
	if _, err := cs.CoreV1().Pods(ns).Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitBound waits until the pod is bound and returns its node.
func waitBound(t *testing.T, cs kubernetes.Interface, ns, name string) string {
	t.Helper()
	var node string
	membertest.Eventually(t, 20*time.Second, func() error {
		p, err := cs.CoreV1().Pods(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if node = p.Spec.NodeName; node == "" {
			return fmt.Errorf("pod %s not bound; conditions %+v", name, p.Status.Conditions)
		}
		return nil
	})
	return node
}

// waitUnschedulable waits for PodScheduled=False reason Unschedulable
// with message want, and a FailedScheduling event.
func waitUnschedulable(t *testing.T, cs kubernetes.Interface, ns, name, want string) {
	t.Helper()
	membertest.Eventually(t, 20*time.Second, func() error {
		p, err := cs.CoreV1().Pods(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Spec.NodeName != "" {
			return fmt.Errorf("pod %s bound to %s, want it pending", name, p.Spec.NodeName)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse &&
				c.Reason == corev1.PodReasonUnschedulable && c.Message == want {
				return nil
			}
		}
		return fmt.Errorf("pod %s conditions %+v, want Unschedulable %q", name, p.Status.Conditions, want)
	})
	membertest.Eventually(t, 10*time.Second, func() error {
		evs, err := cs.CoreV1().Events(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.Name == name && e.Reason == "FailedScheduling" && e.Type == corev1.EventTypeWarning &&
				e.Source.Component == "default-scheduler" && strings.Contains(e.Message, "nodes are available") {
				return nil
			}
		}
		return fmt.Errorf("no FailedScheduling event for %s", name)
	})
}

// TestSchedulerCluster runs the scheduler of a one-member cluster against
// nodes and pods created through the API: placement by requests,
// nodeSelector and spreading, an Unschedulable pod with kube's message
// and event, scheduled once a node that fits appears, and a pod of
// another scheduler left alone.
func TestSchedulerCluster(t *testing.T) {
	c := membertest.StartCluster(t, 1, fastRetries)
	cs := c.Clientset(0)
	const ns = "default"
	createNode(t, cs, "node-a", 2, nil)
	createNode(t, cs, "node-b", 2, map[string]string{"disk": "ssd"})
	createNode(t, cs, "node-c", 2, nil)

	// Spreading: six pods of one owner, two per node.
	owner, err := cs.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	owned := func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name,
			UID: owner.UID, Controller: &yes}}
	}
	perNode := map[string]int{}
	for i := range 6 {
		createPod(t, cs, ns, fmt.Sprintf("spread-%d", i), 0, owned)
	}
	for i := range 6 {
		perNode[waitBound(t, cs, ns, fmt.Sprintf("spread-%d", i))]++
	}
	if perNode["node-a"] != 2 || perNode["node-b"] != 2 || perNode["node-c"] != 2 {
		t.Errorf("spread pods per node: %v, want 2 on each", perNode)
	}

	// Requests: 1.5 cpu each, one per node; nodeSelector.
	createPod(t, cs, ns, "ssd", 0, func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "ssd"} })
	if got := waitBound(t, cs, ns, "ssd"); got != "node-b" {
		t.Errorf("pod with nodeSelector disk=ssd on %s, want node-b", got)
	}
	seen := map[string]bool{}
	for i := range 3 {
		name := fmt.Sprintf("big-%d", i)
		createPod(t, cs, ns, name, 1500)
		seen[waitBound(t, cs, ns, name)] = true
	}
	if len(seen) != 3 {
		t.Errorf("three 1.5-cpu pods on %v, want one per node", seen)
	}

	// Fits nowhere, then a node that fits appears.
	createPod(t, cs, ns, "huge", 1000)
	waitUnschedulable(t, cs, ns, "huge", "0/3 nodes are available: 3 Insufficient cpu.")
	createPod(t, cs, ns, "picky", 0, func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "nvme"} })
	waitUnschedulable(t, cs, ns, "picky", "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.")
	createNode(t, cs, "node-d", 4, nil)
	if got := waitBound(t, cs, ns, "huge"); got != "node-d" {
		t.Errorf("huge on %s, want node-d", got)
	}

	// Another scheduler's pod stays pending, untouched.
	createPod(t, cs, ns, "other", 0, func(p *corev1.Pod) { p.Spec.SchedulerName = "other-scheduler" })
	time.Sleep(500 * time.Millisecond) // the scheduler had the time to (wrongly) act
	p, err := cs.CoreV1().Pods(ns).Get(t.Context(), "other", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.NodeName != "" || len(p.Status.Conditions) != 0 {
		t.Errorf("pod of other-scheduler: node %q conditions %+v, want untouched", p.Spec.NodeName, p.Status.Conditions)
	}
	p, err = cs.CoreV1().Pods(ns).Get(t.Context(), "picky", metav1.GetOptions{})
	if err != nil || p.Spec.NodeName != "" {
		t.Errorf("picky: %v, node %q, want still pending", err, p.Spec.NodeName)
	}
}
