package workload

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// TestPodEvents: the owner of a pod that appears, changes owner or goes is
// enqueued with its expectations settled; an orphan whose labels change is
// offered for adoption; a resync (same resourceVersion) does nothing.
func TestPodEvents(t *testing.T) {
	var got []string
	e := &PodEvents{
		Owner: func(p *corev1.Pod) string {
			if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
				return p.Namespace + "/" + ref.Name
			}
			return ""
		},
		Orphan:  func(p *corev1.Pod) { got = append(got, "orphan "+p.Name) },
		Created: func(key string) { got = append(got, "created "+key) },
		Deleted: func(key, pod string) { got = append(got, "deleted "+key+" "+pod) },
		Enqueue: func(key string) { got = append(got, "enqueue "+key) },
	}
	h := e.Handler()
	yes := true
	pod := func(name, rv, owner string, labels map[string]string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv, Labels: labels}}
		if owner != "" {
			p.OwnerReferences = []metav1.OwnerReference{{Name: owner, UID: types.UID("uid-" + owner), Controller: &yes}}
		}
		return p
	}
	check := func(step string, want ...string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", step, got, want)
		}
		got = nil
	}

	owned := pod("a", "1", "rs", nil)
	h.OnAdd(owned, false)
	check("add owned", "created ns/rs", "enqueue ns/rs")

	h.OnAdd(pod("b", "1", "", nil), false)
	check("add orphan", "orphan b")

	h.OnUpdate(owned, owned)
	check("resync")

	moved := pod("a", "2", "other", nil)
	h.OnUpdate(owned, moved)
	check("owner changed", "enqueue ns/rs", "enqueue ns/other")

	relabelled := pod("b", "2", "", map[string]string{"app": "x"})
	h.OnUpdate(pod("b", "1", "", nil), relabelled)
	check("orphan relabelled", "orphan b")

	deleting := pod("a", "3", "other", nil)
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	h.OnUpdate(moved, deleting)
	check("graceful deletion", "deleted ns/other ns/a", "enqueue ns/other")

	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/a", Obj: moved})
	check("tombstone", "deleted ns/other ns/a", "enqueue ns/other")
}
