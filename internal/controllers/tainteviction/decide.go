package tainteviction

import (
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
)

// evictAt is when pod must go from a node with the NoExecute taints
// taints, and false when never (the zero time: at once). added tells when
// each taint was added (its timeAdded, or when first seen); pod's binding
// time counts instead when it is later.
func evictAt(pod *corev1.Pod, taints []corev1.Taint, added func(*corev1.Taint) time.Time) (time.Time, bool) {
	bound := scheduledAt(pod)
	var at time.Time
	evict := false
	for i := range taints {
		t := &taints[i]
		tol := matching(pod.Spec.Tolerations, t)
		if tol == nil {
			return time.Time{}, true // not tolerated: at once
		}
		if tol.TolerationSeconds == nil {
			continue // tolerated forever
		}
		start := added(t)
		if bound.After(start) {
			start = bound
		}
		due := start.Add(time.Duration(max(*tol.TolerationSeconds, 0)) * time.Second)
		if !evict || due.Before(at) {
			at, evict = due, true
		}
	}
	return at, evict
}

// matching is the first of tols that tolerates t, as kube's
// GetMatchingTolerations takes it, or nil.
func matching(tols []corev1.Toleration, t *corev1.Taint) *corev1.Toleration {
	for i := range tols {
		if tols[i].ToleratesTaint(logr.Discard(), t, true) {
			return &tols[i]
		}
	}
	return nil
}

// noExecute are the NoExecute taints of n.
func noExecute(n *corev1.Node) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoExecute {
			out = append(out, t)
		}
	}
	return out
}

// scheduledAt is when pod was bound (its PodScheduled condition's
// transition), or the zero time when unknown.
func scheduledAt(pod *corev1.Pod) time.Time {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}
