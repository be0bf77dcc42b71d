package daemonset

import (
	"context"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/litek8s/litek8s/internal/controllers/workload"
)

// rollingUpdate replaces the pods of old revisions, as kube's
// rollingUpdate: without surge it deletes old pods (the manage step then
// creates new ones) while at most maxUnavailable nodes lack an available
// pod, old pods that are not available first; with surge it first
// creates a new pod next to an available old one on at most maxSurge
// nodes, and deletes the old pod once the new one is available.
func (c *controller) rollingUpdate(ctx context.Context, key string, ds *appsv1.DaemonSet, nodes []*corev1.Node,
	byNode map[string][]*corev1.Pod, hash string) error {
	maxSurge, maxUnavailable := budgets(ds, nodes)
	now := time.Now()
	available := func(p *corev1.Pod) bool { return workload.IsAvailable(p, ds.Spec.MinReadySeconds, now) }
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range byNode {
			if !yield(n) {
				return
			}
		}
	})
	var victims []*corev1.Pod
	var create []string
	if maxSurge == 0 {
		var unavailable int
		var candidates []*corev1.Pod
		for _, n := range names {
			newPod, oldPod, ok := splitOnNode(byNode[n], hash)
			switch {
			case !ok, oldPod == nil && newPod == nil, oldPod != nil && newPod != nil:
				unavailable++ // manage fixes this node first
			case newPod != nil:
				if !available(newPod) {
					unavailable++
				}
			case !available(oldPod):
				victims = append(victims, oldPod) // replacing it costs nothing
			case unavailable < maxUnavailable:
				candidates = append(candidates, oldPod)
			}
		}
		n := min(max(0, maxUnavailable-unavailable), len(candidates))
		victims = append(victims, candidates[:n]...)
	} else {
		var surged int
		var candidates []string
		for _, n := range names {
			newPod, oldPod, ok := splitOnNode(byNode[n], hash)
			switch {
			case !ok:
				surged++
			case oldPod == nil: // manage handles it
			case newPod == nil && !available(oldPod):
				create = append(create, n)
			case newPod == nil && surged < maxSurge:
				candidates = append(candidates, n)
			case newPod == nil:
			case !available(newPod):
				surged++
			default:
				victims = append(victims, oldPod)
			}
		}
		n := min(max(0, maxSurge-surged), len(candidates))
		create = append(create, candidates[:n]...)
	}
	return c.syncNodes(ctx, key, ds, victims, create, hash)
}

// splitOnNode returns a node's running updated and old pod; false when
// it has more than one of either (manage deletes the extra first).
func splitOnNode(pods []*corev1.Pod, hash string) (newPod, oldPod *corev1.Pod, ok bool) {
	for _, p := range running(pods) {
		if isUpdated(p, hash) {
			if newPod != nil {
				return nil, nil, false
			}
			newPod = p
		} else {
			if oldPod != nil {
				return nil, nil, false
			}
			oldPod = p
		}
	}
	return newPod, oldPod, true
}

// budgets returns maxSurge and maxUnavailable as node counts, scaled on
// the nodes that should run ds (rounded up); 1 unavailable when both are 0.
func budgets(ds *appsv1.DaemonSet, nodes []*corev1.Node) (surge, unavailable int) {
	desired := 0
	for _, n := range nodes {
		if place(ds, n).shouldRun {
			desired++
		}
	}
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if ru != nil {
		surge = scaled(ru.MaxSurge, desired)
		unavailable = scaled(ru.MaxUnavailable, desired)
	} else {
		unavailable = 1
	}
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return surge, unavailable
}

func scaled(v *intstr.IntOrString, total int) int {
	if v == nil {
		return 0
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, total, true)
	if err != nil {
		return 0
	}
	return max(0, n)
}
