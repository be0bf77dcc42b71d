package workload

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// PodEvents turns a pod informer's events into work for a controller
// that owns pods through controller references (the ReplicaSet and
// DaemonSet controllers, as kube's addPod/updatePod/deletePod): the owner
// of a pod that appears, changes or goes is synced, an observed creation
// or deletion settles its expectations, and the controllers that may
// adopt an orphan are enqueued.
type PodEvents struct {
	// Owner returns the queue key of the live controller of pod ("" when
	// none of the cache's objects controls it).
	Owner func(pod *corev1.Pod) string
	// Orphan enqueues the controllers whose selector matches an orphan.
	Orphan func(pod *corev1.Pod)
	// Created and Deleted tell the expectations of owner key that one of
	// its pods was created or deleted ("namespace/name").
	Created func(key string)
	Deleted func(key, pod string)
	// Enqueue adds key to the controller's queue.
	Enqueue func(key string)
}

// Handler returns the informer event handler.
func (e *PodEvents) Handler() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{AddFunc: e.add, UpdateFunc: kit.OnUpdate(e.update), DeleteFunc: e.delete}
}

func (e *PodEvents) add(obj any) {
	pod := obj.(*corev1.Pod)
	if pod.DeletionTimestamp != nil {
		e.delete(pod) // a restarted informer can list a pod being deleted
		return
	}
	if key := e.Owner(pod); key != "" {
		e.Created(key)
		e.Enqueue(key)
		return
	}
	if metav1.GetControllerOfNoCopy(pod) == nil {
		e.Orphan(pod)
	}
}

func (e *PodEvents) update(o, p *corev1.Pod) {
	if p.DeletionTimestamp != nil && o.DeletionTimestamp == nil {
		e.delete(p) // deleted gracefully: it no longer counts
		return
	}
	if key := e.Owner(o); key != "" && !sameController(o, p) {
		e.Enqueue(key)
	}
	if key := e.Owner(p); key != "" {
		e.Enqueue(key)
		return
	}
	if metav1.GetControllerOfNoCopy(p) == nil && (!labels.Equals(o.Labels, p.Labels) || !sameController(o, p)) {
		e.Orphan(p)
	}
}

func (e *PodEvents) delete(obj any) {
	pod, ok := kit.Tombstone[*corev1.Pod](obj)
	if !ok {
		return
	}
	if key := e.Owner(pod); key != "" {
		e.Deleted(key, pod.Namespace+"/"+pod.Name)
		e.Enqueue(key)
	}
}

// sameController tells whether a and b have the same controller (or both
// none).
func sameController(a, b *corev1.Pod) bool {
	ra, rb := metav1.GetControllerOfNoCopy(a), metav1.GetControllerOfNoCopy(b)
	return (ra == nil) == (rb == nil) && (ra == nil || ra.UID == rb.UID)
}
