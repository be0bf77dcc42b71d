package nodelifecycle

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// managed are the taints this controller sets and removes.
var managed = []corev1.Taint{
	{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeMemoryPressure, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeDiskPressure, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodePIDPressure, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeNetworkUnavailable, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule},
}

// wantedTaints are the managed taints the node's conditions and spec call
// for.
func wantedTaints(n *corev1.Node) []corev1.Taint {
	var want []corev1.Taint
	add := func(key string, effects ...corev1.TaintEffect) {
		for _, e := range effects {
			want = append(want, corev1.Taint{Key: key, Effect: e})
		}
	}
	for _, c := range n.Status.Conditions {
		switch {
		case c.Type == corev1.NodeReady && c.Status == corev1.ConditionFalse:
			add(corev1.TaintNodeNotReady, corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute)
		case c.Type == corev1.NodeReady && c.Status == corev1.ConditionUnknown:
			add(corev1.TaintNodeUnreachable, corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute)
		case c.Status != corev1.ConditionTrue:
		case c.Type == corev1.NodeMemoryPressure:
			add(corev1.TaintNodeMemoryPressure, corev1.TaintEffectNoSchedule)
		case c.Type == corev1.NodeDiskPressure:
			add(corev1.TaintNodeDiskPressure, corev1.TaintEffectNoSchedule)
		case c.Type == corev1.NodePIDPressure:
			add(corev1.TaintNodePIDPressure, corev1.TaintEffectNoSchedule)
		case c.Type == corev1.NodeNetworkUnavailable:
			add(corev1.TaintNodeNetworkUnavailable, corev1.TaintEffectNoSchedule)
		}
	}
	if n.Spec.Unschedulable {
		add(corev1.TaintNodeUnschedulable, corev1.TaintEffectNoSchedule)
	}
	return want
}

// reconcileTaints returns the node's taints with the managed ones made
// what its conditions call for, and whether that changed anything.
// Taints of other keys are kept in place.
func reconcileTaints(n *corev1.Node, now time.Time) ([]corev1.Taint, bool) {
	want := wantedTaints(n)
	has := func(ts []corev1.Taint, t *corev1.Taint) bool {
		return slices.ContainsFunc(ts, func(o corev1.Taint) bool { return o.MatchTaint(t) })
	}
	var out []corev1.Taint
	changed := false
	for _, t := range n.Spec.Taints {
		if has(managed, &t) && !has(want, &t) {
			changed = true
			continue
		}
		out = append(out, t)
	}
	for _, t := range want {
		if !has(out, &t) {
			if t.Effect == corev1.TaintEffectNoExecute {
				t.TimeAdded = &metav1.Time{Time: now}
			}
			out = append(out, t)
			changed = true
		}
	}
	return out, changed
}

// markUnknown makes the node's kubelet-posted conditions Unknown; it
// reports whether anything changed.
func markUnknown(n *corev1.Node, now time.Time) bool {
	changed := false
	for _, typ := range []corev1.NodeConditionType{corev1.NodeReady, corev1.NodeMemoryPressure,
		corev1.NodeDiskPressure, corev1.NodePIDPressure} {
		i := slices.IndexFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool { return c.Type == typ })
		if i < 0 {
			n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: typ,
				Status: corev1.ConditionUnknown, Reason: "NodeStatusNeverUpdated",
				Message: "Kubelet never posted node status.", LastTransitionTime: metav1.NewTime(now)})
			changed = true
			continue
		}
		c := &n.Status.Conditions[i]
		if c.Status == corev1.ConditionUnknown {
			continue
		}
		c.Status, c.Reason, c.Message = corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."
		c.LastTransitionTime = metav1.NewTime(now)
		changed = true
	}
	return changed
}
