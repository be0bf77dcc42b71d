package nodelifecycle_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

const grace = 1500 * time.Millisecond

func shortGrace(cfg *member.Config) {
	cfg.Controllers.Scheduling.NodeLifecycle.GracePeriod = grace
	cfg.Controllers.Scheduling.NodeLifecycle.MonitorPeriod = 100 * time.Millisecond
}

// kubelet is what a kubelet does for a node: register it Ready and
// renew its lease.
type kubelet struct {
	t    *testing.T
	cs   kubernetes.Interface
	node string
}

func (k *kubelet) register() {
	k.t.Helper()
	_, err := k.cs.CoreV1().Nodes().Create(k.t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: k.node}},
		metav1.CreateOptions{})
	if err != nil {
		k.t.Fatal(err)
	}
	k.postReady()
	k.renew()
}

// postReady posts Ready True.
func (k *kubelet) postReady() {
	k.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := k.cs.CoreV1().Nodes().Get(k.t.Context(), k.node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
			Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}
		_, err = k.cs.CoreV1().Nodes().UpdateStatus(k.t.Context(), n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		k.t.Fatal(err)
	}
}

// renew creates or renews the node's lease.
func (k *kubelet) renew() {
	k.t.Helper()
	leases := k.cs.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	now := metav1.NewMicroTime(time.Now())
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		l, err := leases.Get(k.t.Context(), k.node, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = leases.Create(k.t.Context(), &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: k.node},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(k.node), LeaseDurationSeconds: ptr.To(int32(40)),
					RenewTime: &now}}, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		l.Spec.RenewTime = &now
		_, err = leases.Update(k.t.Context(), l, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		k.t.Fatal(err)
	}
}

// state is a node's Ready condition and taints ("key:Effect").
func state(t *testing.T, cs kubernetes.Interface, name string) (*corev1.NodeCondition, []string) {
	t.Helper()
	n, err := cs.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var taints []string
	for _, tn := range n.Spec.Taints {
		taints = append(taints, tn.Key+":"+string(tn.Effect))
	}
	slices.Sort(taints)
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			return &n.Status.Conditions[i], taints
		}
	}
	return nil, taints
}

// TestNodeLifecycle: a node whose lease is renewed stays Ready and loses
// the not-ready taint new nodes get; one whose lease stops being renewed
// goes Unknown with the unreachable taints, which go again once its
// kubelet posts Ready.
func TestNodeLifecycle(t *testing.T) {
	c := membertest.StartCluster(t, 1, shortGrace)
	cs := c.Clientset(0)
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: corev1.NamespaceNodeLease}}, metav1.CreateOptions{}); err != nil &&
		!apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	alive := &kubelet{t: t, cs: cs, node: "alive"}
	silent := &kubelet{t: t, cs: cs, node: "silent"}
	alive.register()
	silent.register()

	// Both are Ready: the not-ready taint of registration goes.
	membertest.Eventually(t, 10*time.Second, func() error {
		for _, n := range []string{"alive", "silent"} {
			if _, taints := state(t, cs, n); len(taints) != 0 {
				return fmt.Errorf("node %s taints %v, want none", n, taints)
			}
		}
		return nil
	})

	// A Ready pod on each.
	for _, n := range []string{"alive", "silent"} {
		readyPod(t, cs, "pod-on-"+n, n)
	}

	// silent stops renewing; alive goes on.
	unreachable := []string{"node.kubernetes.io/unreachable:NoExecute", "node.kubernetes.io/unreachable:NoSchedule"}
	deadline := time.Now().Add(10 * time.Second)
	for {
		alive.renew()
		ready, taints := state(t, cs, "silent")
		if ready != nil && ready.Status == corev1.ConditionUnknown && slices.Equal(taints, unreachable) {
			if ready.Reason != "NodeStatusUnknown" || ready.Message != "Kubelet stopped posting node status." {
				t.Errorf("silent Ready condition %+v", ready)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("silent: Ready %+v taints %v, want Unknown and %v", ready, taints, unreachable)
		}
		time.Sleep(grace / 5)
	}
	if ready, taints := state(t, cs, "alive"); ready == nil || ready.Status != corev1.ConditionTrue || len(taints) != 0 {
		t.Errorf("alive, renewing its lease: Ready %+v taints %v, want True and none", ready, taints)
	}
	// The pod of the Unknown node is no longer Ready; the other one is.
	membertest.Eventually(t, 10*time.Second, func() error {
		alive.renew()
		if s := podReady(t, cs, "pod-on-silent"); s != corev1.ConditionFalse {
			return fmt.Errorf("pod on the Unknown node: Ready %s, want False", s)
		}
		return nil
	})
	if s := podReady(t, cs, "pod-on-alive"); s != corev1.ConditionTrue {
		t.Errorf("pod on the live node: Ready %s, want True", s)
	}

	// silent's kubelet comes back.
	silent.renew()
	silent.postReady()
	membertest.Eventually(t, 10*time.Second, func() error {
		alive.renew()
		if ready, taints := state(t, cs, "silent"); ready.Status != corev1.ConditionTrue || len(taints) != 0 {
			return fmt.Errorf("silent back: Ready %s taints %v, want True and none", ready.Status, taints)
		}
		return nil
	})

	// Unschedulable gets its taint.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := cs.CoreV1().Nodes().Get(t.Context(), "alive", metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Spec.Unschedulable = true
		_, err = cs.CoreV1().Nodes().Update(t.Context(), n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	membertest.Eventually(t, 10*time.Second, func() error {
		alive.renew()
		if _, taints := state(t, cs, "alive"); !slices.Equal(taints, []string{"node.kubernetes.io/unschedulable:NoSchedule"}) {
			return fmt.Errorf("cordoned node taints %v", taints)
		}
		return nil
	})
}

// readyPod creates a pod bound to node and posts it Running and Ready, as
// its kubelet would.
func readyPod(t *testing.T, cs kubernetes.Interface, name, node string) {
	t.Helper()
	pods := cs.CoreV1().Pods(metav1.NamespaceDefault)
	var p *corev1.Pod
	membertest.Eventually(t, 10*time.Second, func() (err error) { // the default ServiceAccount may not exist yet
		p, err = pods.Create(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
			metav1.CreateOptions{})
		return err
	})
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
		LastTransitionTime: metav1.Now()}}
	if _, err := pods.UpdateStatus(t.Context(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// podReady is the status of a pod's Ready condition.
func podReady(t *testing.T, cs kubernetes.Interface, name string) corev1.ConditionStatus {
	t.Helper()
	p, err := cs.CoreV1().Pods(metav1.NamespaceDefault).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status
		}
	}
	return ""
}
