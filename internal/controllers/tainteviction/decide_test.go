package tainteviction

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestEvictAt(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	unreachable := corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}
	other := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoExecute}
	tol := func(key string, secs *int64) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute,
			TolerationSeconds: secs}
	}
	added := func(t *corev1.Taint) time.Time {
		if t.Key == other.Key {
			return t0.Add(10 * time.Second)
		}
		return t0
	}
	for _, tc := range []struct {
		name   string
		tols   []corev1.Toleration
		taints []corev1.Taint
		bound  time.Time
		want   time.Time
		evict  bool
	}{
		{name: "not tolerated", taints: []corev1.Taint{unreachable}, evict: true},
		{name: "one of two not tolerated", tols: []corev1.Toleration{tol(unreachable.Key, nil)},
			taints: []corev1.Taint{unreachable, other}, evict: true},
		{name: "tolerated forever", tols: []corev1.Toleration{tol(unreachable.Key, nil)},
			taints: []corev1.Taint{unreachable}},
		{name: "tolerated for 30 s", tols: []corev1.Toleration{tol(unreachable.Key, ptr.To[int64](30))},
			taints: []corev1.Taint{unreachable}, want: t0.Add(30 * time.Second), evict: true},
		{name: "negative seconds: at once", tols: []corev1.Toleration{tol(unreachable.Key, ptr.To[int64](-5))},
			taints: []corev1.Taint{unreachable}, want: t0, evict: true},
		{name: "the shortest of two", tols: []corev1.Toleration{tol(unreachable.Key, ptr.To[int64](30)),
			tol(other.Key, ptr.To[int64](5))}, taints: []corev1.Taint{unreachable, other},
			want: t0.Add(15 * time.Second), evict: true},
		{name: "forever and 30 s", tols: []corev1.Toleration{tol(unreachable.Key, nil), tol(other.Key, ptr.To[int64](30))},
			taints: []corev1.Taint{unreachable, other}, want: t0.Add(40 * time.Second), evict: true},
		{name: "bound after the taint", tols: []corev1.Toleration{tol(unreachable.Key, ptr.To[int64](30))},
			taints: []corev1.Taint{unreachable}, bound: t0.Add(time.Minute), want: t0.Add(90 * time.Second), evict: true},
		{name: "wildcard toleration", tols: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			taints: []corev1.Taint{unreachable, other}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &corev1.Pod{Spec: corev1.PodSpec{Tolerations: tc.tols}}
			if !tc.bound.IsZero() {
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue,
					LastTransitionTime: metav1.NewTime(tc.bound)}}
			}
			at, evict := evictAt(p, tc.taints, added)
			if evict != tc.evict || !at.Equal(tc.want) {
				t.Errorf("evictAt = %v, %v; want %v, %v", at, evict, tc.want, tc.evict)
			}
		})
	}
}
