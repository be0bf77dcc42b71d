package simnode

import (
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// ipAllocator hands out pod IPs from each node's /24, unique on the node:
// an address is taken when a live pod on the node shows it in its status
// (pods that ran before this term, adopted) or when this term handed it
// out.
type ipAllocator struct {
	pods cache.Indexer // indexed by kit.PodNodeIndex

	mu sync.Mutex // guards assigned
	// assigned are the addresses handed out this term, by node and pod.
	assigned map[string]map[types.UID]string
}

func newIPAllocator(pods cache.Indexer) *ipAllocator {
	return &ipAllocator{pods: pods, assigned: make(map[string]map[types.UID]string)}
}

// get returns pod's address on node number i.
func (a *ipAllocator) get(i int, pod *corev1.Pod) (string, error) {
	node := pod.Spec.NodeName
	prefix := strings.TrimSuffix(podCIDR(i), "0/24")
	a.mu.Lock()
	defer a.mu.Unlock()
	mine := a.assigned[node]
	if mine == nil {
		mine = make(map[types.UID]string)
		a.assigned[node] = mine
	}
	if ip := mine[pod.UID]; ip != "" {
		return ip, nil
	}
	if ip := pod.Status.PodIP; strings.HasPrefix(ip, prefix) {
		mine[pod.UID] = ip // adopted
		return ip, nil
	}
	used := make(map[string]bool, len(mine))
	for _, ip := range mine {
		used[ip] = true
	}
	objs, err := a.pods.ByIndex(kit.PodNodeIndex, node)
	if err != nil {
		return "", fmt.Errorf("simnode: pods of %s: %w", node, err)
	}
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok && p.UID != pod.UID && !terminal(p) && p.Status.PodIP != "" {
			used[p.Status.PodIP] = true
		}
	}
	for host := 2; host <= 254; host++ {
		if ip := podIP(i, host); !used[ip] {
			mine[pod.UID] = ip
			return ip, nil
		}
	}
	return "", errNoAddress
}

// release frees pod's address on node (the pod is gone or finished).
func (a *ipAllocator) release(node string, uid types.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if m := a.assigned[node]; m != nil {
		delete(m, uid)
		if len(m) == 0 {
			delete(a.assigned, node)
		}
	}
}

func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}
