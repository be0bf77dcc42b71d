package kit

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOnUpdate(t *testing.T) {
	pod := func(rv string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", ResourceVersion: rv}}
	}
	var calls [][2]string
	f := OnUpdate(func(o, c *corev1.Pod) { calls = append(calls, [2]string{o.ResourceVersion, c.ResourceVersion}) })
	f(pod("1"), pod("1")) // a resync: skipped
	f(pod("1"), pod("2"))
	if len(calls) != 1 || calls[0] != [2]string{"1", "2"} {
		t.Errorf("calls %v, want only [1 2]", calls)
	}
}
