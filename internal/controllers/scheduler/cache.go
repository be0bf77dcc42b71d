package scheduler

import (
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// nodeCache is the scheduler's view of the nodes and of what the pods on
// them request: pods bound according to the informer plus the pods this
// scheduler assumed (bound, or binding, whose update has not come back).
type nodeCache struct {
	mu    sync.Mutex // guards the fields below; informer handlers and the scheduling goroutine take it
	nodes map[string]*nodeInfo
	// sorted are the nodes with an object, by name; nil when stale.
	sorted []*nodeInfo
	// pods are the counted pods by namespace/name.
	pods map[string]*podEntry
}

func newNodeCache() *nodeCache {
	return &nodeCache{nodes: make(map[string]*nodeInfo), pods: make(map[string]*podEntry)}
}

// info returns name's nodeInfo, creating it; caller must hold mu.
func (c *nodeCache) info(name string) *nodeInfo {
	n, ok := c.nodes[name]
	if !ok {
		n = newNodeInfo(name)
		c.nodes[name] = n
	}
	return n
}

// setNode records an added or updated node (nil object: deleted).
func (c *nodeCache) setNode(name string, node *corev1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.info(name)
	if (n.node == nil) != (node == nil) {
		c.sorted = nil
	}
	n.setNode(node)
	if n.empty() {
		delete(c.nodes, name)
	}
}

// nodeList returns the known nodes by name; caller must hold mu and not
// keep the slice past it.
func (c *nodeCache) nodeList() []*nodeInfo {
	if c.sorted == nil {
		c.sorted = make([]*nodeInfo, 0, len(c.nodes))
		for _, n := range c.nodes {
			if n.node != nil {
				c.sorted = append(c.sorted, n)
			}
		}
		slices.SortFunc(c.sorted, func(a, b *nodeInfo) int { return strings.Compare(a.name, b.name) })
	}
	return c.sorted
}

// setPod records the informer's pod. A bound, non-terminal pod counts on
// its node (replacing its assumption); a terminal one no longer counts.
// It reports whether the pod stopped counting somewhere (resources freed).
func (c *nodeCache) setPod(key string, pod *corev1.Pod) (freed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.pods[key]
	switch {
	case pod.Spec.NodeName == "":
		if old != nil && old.assumed && old.uid == pod.UID {
			return false // an update older than our binding
		}
		return c.remove(key)
	case terminal(pod):
		return c.remove(key)
	case old != nil && old.uid == pod.UID && old.node == pod.Spec.NodeName:
		old.assumed = false
		return false
	}
	freed = c.remove(key)
	c.insert(key, entryOf(pod, pod.Spec.NodeName))
	return freed
}

// deletePod forgets a deleted pod; it reports whether it counted.
func (c *nodeCache) deletePod(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.remove(key)
}

// assume counts p on node before its binding is seen; caller must hold mu.
func (c *nodeCache) assume(key string, p *podInfo, node string) {
	c.remove(key)
	c.insert(key, &podEntry{uid: p.pod.UID, node: node, req: p.req, nonZeroCPU: p.nonZeroCPU,
		nonZeroMem: p.nonZeroMem, owner: p.owner, assumed: true})
}

// forget drops an assumption whose binding failed.
func (c *nodeCache) forget(key string, uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.pods[key]; e != nil && e.assumed && e.uid == uid {
		c.remove(key)
	}
}

// holds tells whether the pod is already bound or assumed; caller must
// hold mu.
func (c *nodeCache) holds(key string, uid types.UID) bool {
	e := c.pods[key]
	return e != nil && e.uid == uid
}

// insert and remove keep nodes and pods in step; caller must hold mu.
func (c *nodeCache) insert(key string, e *podEntry) {
	c.pods[key] = e
	c.info(e.node).add(e, 1)
}

func (c *nodeCache) remove(key string) bool {
	e, ok := c.pods[key]
	if !ok {
		return false
	}
	delete(c.pods, key)
	if n := c.nodes[e.node]; n != nil {
		n.add(e, -1)
		if n.empty() {
			delete(c.nodes, e.node)
		}
	}
	return true
}

func terminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}
