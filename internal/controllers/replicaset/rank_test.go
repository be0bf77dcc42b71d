package replicaset

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodsToDelete(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := func(name, node string, phase corev1.PodPhase, readySince time.Duration, created time.Duration) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(base.Add(created))},
			Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
		if readySince > 0 {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
				LastTransitionTime: metav1.NewTime(base.Add(readySince))}}
		}
		return p
	}
	pods := []*corev1.Pod{
		pod("running-old", "n1", corev1.PodRunning, time.Minute, 0),
		pod("running-recent", "n2", corev1.PodRunning, time.Hour, time.Second),
		pod("pending", "n1", corev1.PodPending, 0, 0),
		pod("unscheduled", "", corev1.PodPending, 0, 0),
		pod("running-unready", "n2", corev1.PodRunning, 0, 0),
		pod("crowded", "n3", corev1.PodRunning, time.Minute, 0),
		pod("crowded-2", "n3", corev1.PodRunning, time.Minute, time.Second),
		pod("crowded-3", "n3", corev1.PodRunning, time.Minute, 2*time.Second),
	}
	want := []string{"unscheduled", "pending", "running-unready", "crowded-3", "crowded-2", "crowded", "running-recent", "running-old"}
	for n := range len(want) { // all of them come in any order
		got := podsToDelete(pods, n)
		if len(got) != min(n, len(pods)) {
			t.Fatalf("podsToDelete(%d) returned %d pods", n, len(got))
		}
		for i, p := range got {
			if p.Name != want[i] {
				t.Errorf("podsToDelete(%d)[%d] = %s, want %s", n, i, p.Name, want[i])
			}
		}
	}
}
