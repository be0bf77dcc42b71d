package deployment

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"math"
)

// Rolling update arithmetic: pure functions of the Deployment and its
// ReplicaSets.

func replicasOf(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

func rsReplicas(rs *appsv1.ReplicaSet) int32 {
	if rs == nil {
		return 0
	}
	if rs.Spec.Replicas == nil {
		return 1
	}
	return *rs.Spec.Replicas
}

func isRolling(d *appsv1.Deployment) bool {
	return d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType
}

// fenceposts resolves maxSurge (rounded up) and maxUnavailable (rounded
// down) against replicas; both zero would block, so unavailable is then 1.
// Defaults are kube's, 25% each.
func fenceposts(maxSurge, maxUnavailable *intstr.IntOrString, replicas int32) (surge, unavailable int32) {
	def := intstr.FromString("25%")
	if maxSurge == nil {
		maxSurge = &def
	}
	if maxUnavailable == nil {
		maxUnavailable = &def
	}
	s, err := intstr.GetScaledValueFromIntOrPercent(maxSurge, int(replicas), true)
	if err != nil {
		s = 0
	}
	u, err := intstr.GetScaledValueFromIntOrPercent(maxUnavailable, int(replicas), false)
	if err != nil {
		u = 0
	}
	if s == 0 && u == 0 {
		u = 1
	}
	return int32(max(s, 0)), int32(max(u, 0))
}

func rollingParams(d *appsv1.Deployment) (surge, unavailable int32) {
	if !isRolling(d) {
		return 0, 0
	}
	var ms, mu *intstr.IntOrString
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil {
		ms, mu = ru.MaxSurge, ru.MaxUnavailable
	}
	return fenceposts(ms, mu, replicasOf(d))
}

// maxUnavailable is how many of the desired pods may be unavailable.
func maxUnavailable(d *appsv1.Deployment) int32 {
	if !isRolling(d) || replicasOf(d) == 0 {
		return 0
	}
	_, u := rollingParams(d)
	return min(u, replicasOf(d))
}

// maxSurge is how many pods above replicas a rolling update may run.
func maxSurge(d *appsv1.Deployment) int32 {
	s, _ := rollingParams(d)
	return s
}

// podCount is the pods rs may still have: its spec, or more while its
// controller has not yet reported the deletions of a scale-down.
func podCount(rs *appsv1.ReplicaSet) int32 {
	if rs == nil {
		return 0
	}
	return max(rsReplicas(rs), rs.Status.Replicas)
}

// newRSReplicas is the size newRS may grow to now: up to replicas, within
// replicas+maxSurge pods in all.
func newRSReplicas(d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) int32 {
	if !isRolling(d) {
		return replicasOf(d)
	}
	var current int32
	for _, rs := range all {
		current += podCount(rs)
	}
	maxTotal := replicasOf(d) + maxSurge(d)
	if current >= maxTotal {
		return rsReplicas(newRS)
	}
	return rsReplicas(newRS) + max(0, min(maxTotal-current, replicasOf(d)-rsReplicas(newRS)))
}

// oldScaleDownBudget is how many old replicas a rolling update may remove
// now without going below replicas-maxUnavailable available pods, counting
// the new ReplicaSet's unavailable pods as already missing (kube's
// maxScaledDown).
func oldScaleDownBudget(d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) int32 {
	var total int32
	for _, rs := range all {
		total += rsReplicas(rs)
	}
	minAvailable := replicasOf(d) - maxUnavailable(d)
	var newUnavailable int32
	if newRS != nil {
		newUnavailable = rsReplicas(newRS) - newRS.Status.AvailableReplicas
	}
	return total - minAvailable - newUnavailable
}

// availableScaleDown is how many available old pods may go: the available
// pods above replicas-maxUnavailable.
func availableScaleDown(d *appsv1.Deployment, all []*appsv1.ReplicaSet) int32 {
	var avail int32
	for _, rs := range all {
		if rs != nil {
			avail += rs.Status.AvailableReplicas
		}
	}
	return max(0, avail-(replicasOf(d)-maxUnavailable(d)))
}

// proportions splits delta (positive: add, negative: remove) over the
// active ReplicaSets of the given sizes as kube does: each takes its size
// scaled from the maximum it was sized for (sizedFor: its max-replicas
// annotation, else the Deployment's status replicas; 0: unknown, it takes
// nothing) to the Deployment's new maximum newMax, rounded, within what
// is left of delta; scaling to zero replicas removes each whole. The
// first (the caller orders them: largest first) takes the leftover. No
// size goes below zero.
func proportions(sizes, sizedFor []int32, newMax, replicas, delta int32) []int32 {
	out := make([]int32, len(sizes))
	var added int32
	for i, s := range sizes {
		if s == 0 || added == delta {
			continue
		}
		var share int32
		switch {
		case replicas == 0:
			share = -s
		case sizedFor[i] > 0:
			share = int32(math.Round(float64(s)*float64(newMax)/float64(sizedFor[i]))) - s
		}
		if left := delta - added; delta > 0 {
			share = min(share, left)
		} else {
			share = max(share, left)
		}
		out[i] = share
		added += share
	}
	if len(out) > 0 {
		out[0] = max(out[0]+delta-added, -sizes[0])
	}
	return out
}
