package tainteviction_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

const (
	ns          = "evict"
	realNode    = "real"
	simNode     = "sim-node-0"
	toleration  = 2 // seconds the ReplicaSet's pods tolerate an unreachable node
	leaseRenew  = 200 * time.Millisecond
	nodeTimeout = 30 * time.Second
)

// kubelet stands for a real node's kubelet: it registers the node Ready
// and renews its lease until stop is called.
type kubelet struct {
	t    *testing.T
	cs   kubernetes.Interface
	done chan struct{}
	wg   sync.WaitGroup
}

func startKubelet(t *testing.T, cs kubernetes.Interface) *kubelet {
	t.Helper()
	ctx := t.Context()
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: realNode}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := cs.CoreV1().Nodes().Get(ctx, realNode, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
			Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}
		n.Status.Capacity = corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110"),
			corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")}
		n.Status.Allocatable = n.Status.Capacity
		_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	k := &kubelet{t: t, cs: cs, done: make(chan struct{})}
	k.renew()
	k.wg.Go(func() {
		tick := time.NewTicker(leaseRenew)
		defer tick.Stop()
		for {
			select {
			case <-k.done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				k.renew()
			}
		}
	})
	t.Cleanup(k.stop)
	return k
}

// stop stops renewing the lease (idempotent).
func (k *kubelet) stop() {
	select {
	case <-k.done:
	default:
		close(k.done)
	}
	k.wg.Wait()
}

// renew creates or renews the node's lease; errors are the test's end.
func (k *kubelet) renew() {
	leases := k.cs.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	ctx := k.t.Context()
	now := metav1.NewMicroTime(time.Now())
	_ = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		l, err := leases.Get(ctx, realNode, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: realNode},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(realNode), LeaseDurationSeconds: ptr.To(int32(40)),
					RenewTime: &now}}, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		l.Spec.RenewTime = &now
		_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
		return err
	})
}

func setUnschedulable(t *testing.T, cs kubernetes.Interface, node string, v bool) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := cs.CoreV1().Nodes().Get(t.Context(), node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Spec.Unschedulable = v
		_, err = cs.CoreV1().Nodes().Update(t.Context(), n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func noExecuteTolerations(secs *int64) []corev1.Toleration {
	var out []corev1.Toleration
	for _, k := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
		out = append(out, corev1.Toleration{Key: k, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs})
	}
	return out
}

func container() []corev1.Container {
	return []corev1.Container{{Name: "c", Image: "registry.invalid/x:1"}}
}

// TestTaintEviction: a node stops renewing its lease and gets the
// unreachable NoExecute taint. Its pod that tolerates it for 0 s is
// evicted at once; the ReplicaSet's pod, tolerating it for 2 s, is marked
// DisruptionTarget (DeletionByTaintManager) and deleted no sooner than 2 s
// after the taint's timeAdded, and the ReplicaSet recreates it on a
// simulated node; the pod that tolerates it forever stays. The evicted
// pods stay Terminating (no kubelet finishes them).
func TestTaintEviction(t *testing.T) {
	c := membertest.StartCluster(t, 1, func(cfg *member.Config) {
		s := &cfg.Controllers.Scheduling
		s.SimNodes.Count = 1
		s.SimNodes.LeaseInterval = 300 * time.Millisecond
		s.SimNodes.LeaseDuration = 2 * time.Second
		s.NodeLifecycle.GracePeriod = 1500 * time.Millisecond
		s.NodeLifecycle.MonitorPeriod = 100 * time.Millisecond
	})
	cs := c.Clientset(0)
	ctx := t.Context()
	for _, n := range []string{corev1.NamespaceNodeLease, ns} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}},
			metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	// Only the real node takes pods at first.
	membertest.Eventually(t, nodeTimeout, func() error {
		_, err := cs.CoreV1().Nodes().Get(ctx, simNode, metav1.GetOptions{})
		return err
	})
	setUnschedulable(t, cs, simNode, true)
	k := startKubelet(t, cs)
	membertest.Eventually(t, nodeTimeout, func() error {
		n, err := cs.CoreV1().Nodes().Get(ctx, realNode, metav1.GetOptions{})
		if err != nil || len(n.Spec.Taints) != 0 {
			return fmt.Errorf("real node: %v taints %+v, want none", err, n.Spec.Taints)
		}
		return nil
	})

	// tolerationSeconds 0: evicted at once (a pod with no toleration gets
	// the API's DefaultTolerationSeconds ones, 300 s).
	for name, tols := range map[string][]corev1.Toleration{"intolerant": noExecuteTolerations(ptr.To[int64](0)),
		"forever": noExecuteTolerations(nil)} {
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{NodeName: realNode, Containers: container(), Tolerations: tols}},
			metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	labels := map[string]string{"app": "web"}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.ReplicaSetSpec{
		Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			Containers: container(), Tolerations: noExecuteTolerations(ptr.To[int64](toleration))}}}}
	if _, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var first corev1.Pod
	membertest.Eventually(t, nodeTimeout, func() error {
		l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil || len(l.Items) != 1 || l.Items[0].Spec.NodeName != realNode {
			return fmt.Errorf("web pods %v, want one on %s", err, realNode)
		}
		first = l.Items[0]
		return nil
	})

	// The real node's kubelet goes silent; the simulated node takes pods.
	setUnschedulable(t, cs, simNode, false)
	k.stop()
	var added time.Time
	membertest.Eventually(t, nodeTimeout, func() error {
		n, err := cs.CoreV1().Nodes().Get(ctx, realNode, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, tn := range n.Spec.Taints {
			if tn.Key == corev1.TaintNodeUnreachable && tn.Effect == corev1.TaintEffectNoExecute && tn.TimeAdded != nil {
				added = tn.TimeAdded.Time
				return nil
			}
		}
		return fmt.Errorf("real node taints %+v, want unreachable:NoExecute", n.Spec.Taints)
	})

	// Watch the pods until the ReplicaSet's first one is marked for
	// deletion, noting when each was first seen Terminating.
	terminating := map[string]time.Time{}
	var evicted *corev1.Pod
	membertest.EventuallyEvery(t, nodeTimeout, 50*time.Millisecond, func() error {
		l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for i, p := range l.Items {
			if _, seen := terminating[p.Name]; !seen && p.DeletionTimestamp != nil {
				terminating[p.Name] = time.Now()
				if p.UID == first.UID {
					evicted = &l.Items[i]
				}
			}
		}
		if evicted == nil {
			return fmt.Errorf("web pod not evicted yet (terminating: %v)", terminating)
		}
		return nil
	})
	if d := terminating[first.Name].Sub(added); d < toleration*time.Second {
		t.Errorf("web pod evicted %v after the taint was added, want at least %d s", d, toleration)
	}
	if at, ok := terminating["intolerant"]; !ok || !at.Before(terminating[first.Name]) {
		t.Errorf("intolerant pod Terminating at %v (%v), want before the web pod (%v)", at, ok, terminating[first.Name])
	}
	if _, ok := terminating["forever"]; ok {
		t.Error("the pod tolerating the taint forever was evicted")
	}
	var cond *corev1.PodCondition
	for i := range evicted.Status.Conditions {
		if evicted.Status.Conditions[i].Type == corev1.DisruptionTarget {
			cond = &evicted.Status.Conditions[i]
		}
	}
	if cond == nil || cond.Status != corev1.ConditionTrue || cond.Reason != "DeletionByTaintManager" ||
		cond.Message != "Taint manager: deleting due to NoExecute taint" {
		t.Errorf("evicted pod's DisruptionTarget condition %+v", cond)
	}

	// The ReplicaSet replaces it on the simulated node, where it runs; the
	// evicted pod stays Terminating on the silent node; an Event says why.
	membertest.Eventually(t, nodeTimeout, func() error {
		l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return err
		}
		var replaced, kept bool
		for _, p := range l.Items {
			switch {
			case p.UID == first.UID:
				kept = p.DeletionTimestamp != nil
			case p.DeletionTimestamp == nil && p.Spec.NodeName == simNode && p.Status.Phase == corev1.PodRunning:
				replaced = true
			}
		}
		if !replaced || !kept {
			return fmt.Errorf("web pods: replacement running on %s %v, evicted one still Terminating %v", simNode, replaced, kept)
		}
		return nil
	})
	membertest.Eventually(t, nodeTimeout, func() error {
		l, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, e := range l.Items {
			if e.Reason == "TaintManagerEviction" && e.InvolvedObject.UID == first.UID &&
				e.Message == "Marking for deletion Pod "+ns+"/"+first.Name {
				return nil
			}
		}
		return fmt.Errorf("no TaintManagerEviction event for %s among %d", first.Name, len(l.Items))
	})
	if p, err := cs.CoreV1().Pods(ns).Get(ctx, "forever", metav1.GetOptions{}); err != nil || p.DeletionTimestamp != nil {
		t.Errorf("pod tolerating forever: %v, deletionTimestamp %v", err, p.DeletionTimestamp)
	}
}
