package scheduler

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// nodeInfo is a node and what the pods bound (or assumed) to it use.
type nodeInfo struct {
	name string
	// node is nil while pods are bound to a node the informer has not
	// shown (yet): such a node is not scheduled to.
	node        *corev1.Node
	allocatable resources
	allocPods   int64
	ready       corev1.ConditionStatus // "" when the node has no Ready condition

	requested              resources
	nonZeroCPU, nonZeroMem int64
	pods                   int64
	// owners counts the node's pods by controller owner uid (spreading).
	owners map[types.UID]int32
}

func newNodeInfo(name string) *nodeInfo {
	return &nodeInfo{name: name, owners: make(map[types.UID]int32)}
}

// setNode records the node's current object (nil: deleted).
func (n *nodeInfo) setNode(node *corev1.Node) {
	n.node = node
	n.allocatable, n.allocPods, n.ready = resources{}, 0, ""
	if node == nil {
		return
	}
	n.allocatable = resourcesOf(node.Status.Allocatable)
	if q, ok := node.Status.Allocatable[corev1.ResourcePods]; ok {
		n.allocPods = q.Value()
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			n.ready = c.Status
		}
	}
}

// podEntry is what a bound or assumed pod counts on its node.
type podEntry struct {
	uid                    types.UID
	node                   string
	req                    resources
	nonZeroCPU, nonZeroMem int64
	owner                  types.UID
	// assumed: bound by this scheduler, the update not seen yet.
	assumed bool
}

func entryOf(pod *corev1.Pod, node string) *podEntry {
	e := &podEntry{uid: pod.UID, node: node, owner: ownerOf(pod)}
	e.req, e.nonZeroCPU, e.nonZeroMem = podRequests(&pod.Spec)
	return e
}

// ownerOf is the uid of the pod's controller (else first) owner, the
// group pods are spread by.
func ownerOf(pod *corev1.Pod) types.UID {
	for _, r := range pod.OwnerReferences {
		if r.Controller != nil && *r.Controller {
			return r.UID
		}
	}
	if len(pod.OwnerReferences) > 0 {
		return pod.OwnerReferences[0].UID
	}
	return ""
}

// add counts (sign 1) or uncounts (sign -1) a pod on the node.
func (n *nodeInfo) add(e *podEntry, sign int64) {
	n.requested.add(&e.req, sign)
	n.nonZeroCPU += sign * e.nonZeroCPU
	n.nonZeroMem += sign * e.nonZeroMem
	n.pods += sign
	if e.owner != "" {
		n.owners[e.owner] += int32(sign)
		if n.owners[e.owner] <= 0 {
			delete(n.owners, e.owner)
		}
	}
}

// empty tells that the nodeInfo holds nothing (it can be dropped).
func (n *nodeInfo) empty() bool { return n.node == nil && n.pods == 0 }
