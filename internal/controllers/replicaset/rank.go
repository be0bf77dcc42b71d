package replicaset

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/litek8s/litek8s/internal/controllers/workload"
)

// podsToDelete returns the n pods to delete first when scaling down, in
// kube's order: unscheduled before scheduled, pending before unknown
// before running, not ready before ready, pods on crowded nodes (of this
// ReplicaSet) first, ready for less time first, more restarts first,
// newest first.
func podsToDelete(pods []*corev1.Pod, n int) []*corev1.Pod {
	if n >= len(pods) {
		return pods
	}
	onNode := map[string]int{}
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			onNode[p.Spec.NodeName]++
		}
	}
	ranked := slices.Clone(pods)
	slices.SortStableFunc(ranked, func(a, b *corev1.Pod) int { return comparePods(a, b, onNode) })
	return ranked[:n]
}

var phaseRank = map[corev1.PodPhase]int{corev1.PodPending: 0, corev1.PodUnknown: 1, corev1.PodRunning: 2}

// comparePods orders a before b (negative) when a is to be deleted first.
func comparePods(a, b *corev1.Pod, onNode map[string]int) int {
	if (a.Spec.NodeName == "") != (b.Spec.NodeName == "") {
		return boolFirst(a.Spec.NodeName == "")
	}
	if pa, pb := phaseRank[a.Status.Phase], phaseRank[b.Status.Phase]; pa != pb {
		return pa - pb
	}
	ra, rb := workload.IsReady(a), workload.IsReady(b)
	if ra != rb {
		return boolFirst(!ra)
	}
	if na, nb := onNode[a.Spec.NodeName], onNode[b.Spec.NodeName]; na != nb {
		return nb - na
	}
	if ra && rb {
		ta, tb := workload.ReadyCondition(a).LastTransitionTime, workload.ReadyCondition(b).LastTransitionTime
		if !ta.Equal(&tb) {
			return -ta.Time.Compare(tb.Time) // ready more recently first
		}
	}
	if ca, cb := restarts(a), restarts(b); ca != cb {
		return cb - ca
	}
	return -a.CreationTimestamp.Time.Compare(b.CreationTimestamp.Time)
}

func boolFirst(aFirst bool) int {
	if aFirst {
		return -1
	}
	return 1
}

func restarts(p *corev1.Pod) int {
	n := 0
	for _, s := range p.Status.ContainerStatuses {
		n = max(n, int(s.RestartCount))
	}
	return n
}
