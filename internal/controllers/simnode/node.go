package simnode

import (
	"context"
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// syncNode registers (or adopts) the node, posts its status when it is
// not Ready or StatusInterval passed, and renews its lease; it asks to be
// called again after about LeaseInterval.
func (s *SimNodes) syncNode(ctx context.Context, name string) (time.Duration, error) {
	i, _ := s.nodeNumber(name)
	obj, exists, _ := s.nodes.GetByKey(name)
	var node *corev1.Node
	if exists {
		node = obj.(*corev1.Node)
	} else {
		created, err := s.client.CoreV1().Nodes().Create(ctx, s.newNode(i), metav1.CreateOptions{})
		if err != nil {
			return 0, err // AlreadyExists: the informer has not shown it yet
		}
		s.log.Debug("registered a simulated node", "node", name)
		node = created
	}
	if s.needsStatus(node) {
		n := node.DeepCopy()
		s.setStatus(n, i)
		updated, err := s.client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		if err != nil {
			return 0, err
		}
		node = updated
	}
	if err := s.renewLease(ctx, node); err != nil {
		return 0, err
	}
	return s.renewAfter(), nil
}

// newNode is simulated node i as its kubelet registers it.
func (s *SimNodes) newNode(i int) *corev1.Node {
	name := s.cfg.NamePrefix + strconv.Itoa(i)
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			corev1.LabelHostname: name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
			"type": "simulated"},
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0"}},
		Spec: corev1.NodeSpec{PodCIDR: podCIDR(i), PodCIDRs: []string{podCIDR(i)}},
	}
	for _, t := range s.cfg.Taints {
		n.Spec.Taints = append(n.Spec.Taints, *t.DeepCopy())
	}
	s.setStatus(n, i)
	return n
}

// setStatus sets the status a healthy kubelet posts.
func (s *SimNodes) setStatus(n *corev1.Node, i int) {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: s.cfg.CPU, corev1.ResourceMemory: s.cfg.Memory,
		corev1.ResourceEphemeralStorage: s.cfg.EphemeralStorage,
		corev1.ResourcePods:             *resource.NewQuantity(s.cfg.Pods, resource.DecimalSI),
	}
	now := metav1.NewTime(time.Now())
	cond := func(t corev1.NodeConditionType, st corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		c := corev1.NodeCondition{Type: t, Status: st, Reason: reason, Message: msg, LastHeartbeatTime: now,
			LastTransitionTime: now}
		for _, old := range n.Status.Conditions {
			if old.Type == t && old.Status == st {
				c.LastTransitionTime = old.LastTransitionTime
			}
		}
		return c
	}
	n.Status.Capacity, n.Status.Allocatable = capacity, capacity.DeepCopy()
	n.Status.Phase = corev1.NodeRunning
	n.Status.Conditions = []corev1.NodeCondition{
		cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
		cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
		cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
		cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
	}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: nodeIP(i)},
		{Type: corev1.NodeHostName, Address: n.Name}}
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = 10250
	n.Status.NodeInfo = corev1.NodeSystemInfo{MachineID: n.Name, SystemUUID: n.Name, BootID: n.Name,
		KernelVersion: "simulated", OSImage: "litek8s simulated node", ContainerRuntimeVersion: "simulated://1",
		KubeletVersion: "v1.37.2-litek8s", KubeProxyVersion: "", OperatingSystem: "linux", Architecture: "amd64"}
}

// needsStatus tells whether the node's status must be posted: it is not
// Ready, or StatusInterval passed since the last heartbeat.
func (s *SimNodes) needsStatus(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status != corev1.ConditionTrue || time.Since(c.LastHeartbeatTime.Time) > s.cfg.StatusInterval
		}
	}
	return true
}

// renewLease creates or renews the node's Lease.
func (s *SimNodes) renewLease(ctx context.Context, node *corev1.Node) error {
	now := metav1.NewMicroTime(time.Now())
	obj, exists, _ := s.leases.GetByKey(leaseNamespace + "/" + node.Name)
	leases := s.client.CoordinationV1().Leases(leaseNamespace)
	if !exists {
		l := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: node.Name, Namespace: leaseNamespace,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(node.Name),
				LeaseDurationSeconds: ptr.To(int32(s.cfg.LeaseDuration / time.Second)), RenewTime: &now},
		}
		_, err := leases.Create(ctx, l, metav1.CreateOptions{})
		return err
	}
	l := obj.(*coordinationv1.Lease).DeepCopy()
	l.Spec.HolderIdentity = ptr.To(node.Name)
	l.Spec.LeaseDurationSeconds = ptr.To(int32(s.cfg.LeaseDuration / time.Second))
	l.Spec.RenewTime = &now
	_, err := leases.Update(ctx, l, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil // deleted meanwhile: created on the next round
	}
	return err
}
