package simnode_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// simulated runs n simulated nodes with short intervals.
func simulated(n int) membertest.Option {
	return func(cfg *member.Config) {
		s := &cfg.Controllers.Scheduling
		s.SimNodes.Count = n
		s.SimNodes.LeaseInterval = 300 * time.Millisecond
		s.SimNodes.LeaseDuration = 2 * time.Second
		s.SimNodes.JobPodDuration = 300 * time.Millisecond
		s.NodeLifecycle.GracePeriod = 3 * time.Second
		s.NodeLifecycle.MonitorPeriod = 200 * time.Millisecond
	}
}

// simNodes waits until the n simulated nodes are Ready, untainted and
// leased, and returns their uids by name.
func simNodes(t *testing.T, cs kubernetes.Interface, n int) map[string]types.UID {
	t.Helper()
	uids := map[string]types.UID{}
	membertest.Eventually(t, 30*time.Second, func() error {
		l, err := cs.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{LabelSelector: "type=simulated"})
		if err != nil {
			return err
		}
		if len(l.Items) != n {
			return fmt.Errorf("%d simulated nodes, want %d", len(l.Items), n)
		}
		for _, node := range l.Items {
			if !ready(&node) || len(node.Spec.Taints) != 0 {
				return fmt.Errorf("node %s: conditions %+v taints %+v", node.Name, node.Status.Conditions, node.Spec.Taints)
			}
			if node.Labels["kubernetes.io/hostname"] != node.Name || node.Labels["kubernetes.io/os"] != "linux" ||
				node.Status.Allocatable.Cpu().Value() != 32 || node.Status.Allocatable.Pods().Value() != 110 ||
				len(node.Status.Addresses) == 0 || node.Status.Addresses[0].Type != corev1.NodeInternalIP {
				return fmt.Errorf("node %s: labels %v allocatable %v addresses %v", node.Name, node.Labels,
					node.Status.Allocatable, node.Status.Addresses)
			}
			lease, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(t.Context(), node.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != node.Name || lease.Spec.RenewTime == nil {
				return fmt.Errorf("lease %s: %+v", node.Name, lease.Spec)
			}
			uids[node.Name] = node.UID
		}
		return nil
	})
	return uids
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func createPod(t *testing.T, cs kubernetes.Interface, ns, name string, adjust ...func(*corev1.Pod)) {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	for _, a := range adjust {
		a(p)
	}
	if _, err := cs.CoreV1().Pods(ns).Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitPod waits until check accepts the pod and returns it.
func waitPod(t *testing.T, cs kubernetes.Interface, ns, name string, check func(*corev1.Pod) error) *corev1.Pod {
	t.Helper()
	var p *corev1.Pod
	membertest.Eventually(t, 20*time.Second, func() (err error) {
		if p, err = cs.CoreV1().Pods(ns).Get(t.Context(), name, metav1.GetOptions{}); err != nil {
			return err
		}
		return check(p)
	})
	return p
}

func isRunning(p *corev1.Pod) error {
	if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" || p.Status.HostIP == "" || p.Status.StartTime == nil {
		return fmt.Errorf("pod %s: phase %s podIP %q hostIP %q", p.Name, p.Status.Phase, p.Status.PodIP, p.Status.HostIP)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status != corev1.ConditionTrue {
			return fmt.Errorf("pod %s not Ready", p.Name)
		}
	}
	if len(p.Status.ContainerStatuses) != 1 || !p.Status.ContainerStatuses[0].Ready ||
		p.Status.ContainerStatuses[0].State.Running == nil {
		return fmt.Errorf("pod %s containers %+v", p.Name, p.Status.ContainerStatuses)
	}
	return nil
}

// leaseRenewals returns each simulated node's lease renewTime.
func leaseRenewals(t *testing.T, cs kubernetes.Interface) map[string]time.Time {
	t.Helper()
	l, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]time.Time{}
	for _, lease := range l.Items {
		out[lease.Name] = renewTime(&lease)
	}
	return out
}

func renewTime(l *coordinationv1.Lease) time.Time {
	if l.Spec.RenewTime == nil {
		return time.Time{}
	}
	return l.Spec.RenewTime.Time
}

// TestSimulatedNodes runs three simulated nodes on a three-member
// cluster: they register with leases, a bound pod runs with an IP from
// its node's range, a Job's pod succeeds, a deleted pod goes at once; the
// next leader adopts the same nodes, renews their leases and keeps the
// pods' statuses.
func TestSimulatedNodes(t *testing.T) {
	const nodes = 3
	c := membertest.StartCluster(t, 3, simulated(nodes))
	cs := c.Clientset(c.Follower())
	const ns = "default"
	uids := simNodes(t, cs, nodes)

	createPod(t, cs, ns, "web")
	web := waitPod(t, cs, ns, "web", isRunning)
	node, err := cs.CoreV1().Nodes().Get(t.Context(), web.Spec.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(web.Status.PodIP, strings.TrimSuffix(node.Spec.PodCIDR, "0/24")) ||
		web.Status.HostIP != node.Status.Addresses[0].Address {
		t.Errorf("pod IP %s host IP %s, node %s has pod CIDR %s and address %s", web.Status.PodIP, web.Status.HostIP,
			node.Name, node.Spec.PodCIDR, node.Status.Addresses[0].Address)
	}

	createPod(t, cs, ns, "job-pod", func(p *corev1.Pod) {
		p.Labels = map[string]string{"batch.kubernetes.io/job-name": "j"}
		p.Spec.RestartPolicy = corev1.RestartPolicyNever
	})
	waitPod(t, cs, ns, "job-pod", func(p *corev1.Pod) error {
		if p.Status.Phase != corev1.PodSucceeded {
			return fmt.Errorf("job pod phase %s", p.Status.Phase)
		}
		if cs := p.Status.ContainerStatuses; len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].State.Terminated.ExitCode != 0 {
			return fmt.Errorf("job pod containers %+v", cs)
		}
		return nil
	})

	createPod(t, cs, ns, "doomed")
	waitPod(t, cs, ns, "doomed", isRunning)
	start := time.Now()
	if err := cs.CoreV1().Pods(ns).Delete(t.Context(), "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	membertest.Eventually(t, 10*time.Second, func() error {
		_, err := cs.CoreV1().Pods(ns).Get(t.Context(), "doomed", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("terminating pod still there: %v", err)
	})
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("terminating pod removed after %v, want well before its 30 s grace period", d)
	}

	// The leader goes; the next one adopts the nodes.
	old := c.WaitLeader()
	c.Stop(old)
	c.WaitLeader()
	stopped := time.Now()
	cs = c.Clientset(c.Follower())
	membertest.Eventually(t, 20*time.Second, func() error {
		for name, at := range leaseRenewals(t, cs) {
			if !at.After(stopped) {
				return fmt.Errorf("lease %s last renewed %v, before the leader stopped", name, at)
			}
		}
		return nil
	})
	if got := simNodes(t, cs, nodes); fmt.Sprint(got) != fmt.Sprint(uids) {
		t.Errorf("nodes after the leader change %v, want the same %v", got, uids)
	}
	after := waitPod(t, cs, ns, "web", isRunning)
	if after.Status.PodIP != web.Status.PodIP || !after.Status.StartTime.Equal(web.Status.StartTime) {
		t.Errorf("web after the leader change: IP %s started %v, want %s %v", after.Status.PodIP,
			after.Status.StartTime, web.Status.PodIP, web.Status.StartTime)
	}
	createPod(t, cs, ns, "web-2", func(p *corev1.Pod) { p.Spec.NodeName = web.Spec.NodeName })
	web2 := waitPod(t, cs, ns, "web-2", isRunning)
	if web2.Status.PodIP == web.Status.PodIP {
		t.Errorf("web-2 got web's IP %s on the same node", web.Status.PodIP)
	}
	c.SameObjects(t.Context(), "/api/v1/nodes", "/api/v1/pods")
}

// TestOtherNodesPodsWaitForTheirKubelet: simnode finishes the deletions of
// its own pods only. A pod deleted gracefully on another node (a real
// kubelet's) stays Terminating after its grace period, until the final
// DELETE with gracePeriodSeconds=0 that its kubelet sends.
func TestOtherNodesPodsWaitForTheirKubelet(t *testing.T) {
	c := membertest.StartCluster(t, 1, simulated(1))
	cs := c.Clientset(0)
	ctx := t.Context()
	simNodes(t, cs, 1)
	const ns = "default"
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "real"}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createPod(t, cs, ns, "on-real", func(p *corev1.Pod) {
		p.Spec.NodeName = "real"
		p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}} // no taint eviction
	})
	createPod(t, cs, ns, "on-sim", func(p *corev1.Pod) { p.Spec.NodeName = "sim-node-0" })
	waitPod(t, cs, ns, "on-sim", isRunning)
	for _, name := range []string{"on-real", "on-sim"} {
		if err := cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2500 * time.Millisecond) // the grace period ends
	if _, err := cs.CoreV1().Pods(ns).Get(ctx, "on-sim", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("pod on the simulated node after its deletion: %v, want NotFound", err)
	}
	p, err := cs.CoreV1().Pods(ns).Get(ctx, "on-real", metav1.GetOptions{})
	if err != nil || p.DeletionTimestamp == nil || !p.DeletionTimestamp.Time.Before(time.Now()) {
		t.Fatalf("pod on the real node after its grace period: %v %+v, want it still Terminating", err, p)
	}
	// The kubelet's final delete.
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "on-real", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0),
		Preconditions: metav1.NewUIDPreconditions(string(p.UID))}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods(ns).Get(ctx, "on-real", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("pod on the real node after the kubelet's delete: %v, want NotFound", err)
	}
}
