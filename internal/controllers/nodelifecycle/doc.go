// Package nodelifecycle is the part of kube's node lifecycle controller
// that watches node health and taints by condition:
//
//   - A node is healthy while its kubelet renews its Lease
//     (kube-node-lease/<node>) or posts its Ready heartbeat. When neither
//     changed for Config.GracePeriod (kube's --node-monitor-grace-period,
//     40 s), the node's Ready, MemoryPressure, DiskPressure and PIDPressure
//     conditions become Unknown (reason NodeStatusUnknown, "Kubelet stopped
//     posting node status."; a condition never posted gets
//     NodeStatusNeverUpdated, "Kubelet never posted node status.").
//   - While a node's Ready condition is not True, the Ready condition of
//     each pod on it is set to False (kube's MarkPodsNotReady, with a
//     NodeNotReady event), so that Services stop sending them traffic;
//     the kubelet sets it again when it is back.
//   - Taints follow the conditions, as kube's TaintNodesByCondition and
//     taint-based eviction passes set them: Ready False gives
//     node.kubernetes.io/not-ready, Ready Unknown
//     node.kubernetes.io/unreachable, each with effects NoSchedule and
//     NoExecute; the pressure and NetworkUnavailable conditions and
//     spec.unschedulable give their NoSchedule taints. A taint whose
//     condition is gone is removed, including the not-ready taint the API
//     puts on every new node, once the node is Ready.
//
// As in kube, this controller never sets Ready back to True: the kubelet
// does when it posts its status again (simnode does for simulated nodes
// when it renews their leases), and the taints go with it. The pods of a
// node with NoExecute taints are evicted by the taint eviction controller
// (internal/controllers/tainteviction), which counts tolerationSeconds
// from the taints' timeAdded set here.
//
// Observations are the controller's own clock: a node is given a full
// grace period from when this term first saw it, so a new leader does not
// mark nodes Unknown for the time no leader watched them.
//
// Ownership: the conditions above when they go Unknown, the taints with
// the keys above, and the pods' Ready condition while their node is not
// Ready. Concurrency: informer handlers record observations
// under mu and enqueue node names; Config.Workers goroutines sync nodes
// from a client-go queue, and a monitor goroutine enqueues every node each
// Config.MonitorPeriod. Run returns once all of them have returned.
package nodelifecycle
