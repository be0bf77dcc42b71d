package workload

import (
	"errors"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// IsActive reports whether pod counts toward its owner's replicas: not
// finished and not being deleted.
func IsActive(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

// ReadyCondition returns pod's Ready condition, nil if it has none.
func ReadyCondition(pod *corev1.Pod) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodReady {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// IsReady reports whether pod's Ready condition is True.
func IsReady(pod *corev1.Pod) bool {
	c := ReadyCondition(pod)
	return c != nil && c.Status == corev1.ConditionTrue
}

// IsAvailable reports whether pod has been ready for minReadySeconds at
// now.
func IsAvailable(pod *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	c := ReadyCondition(pod)
	if c == nil || c.Status != corev1.ConditionTrue {
		return false
	}
	return minReadySeconds == 0 || !c.LastTransitionTime.IsZero() &&
		!c.LastTransitionTime.Add(time.Duration(minReadySeconds)*time.Second).After(now)
}

// PodFromTemplate builds a pod of tpl controlled by owner (kind gvk):
// named generateName plus a random suffix, with the template's labels,
// annotations, finalizers and spec.
func PodFromTemplate(tpl *corev1.PodTemplateSpec, owner metav1.Object, gvk schema.GroupVersionKind, generateName string) *corev1.Pod {
	t := tpl.DeepCopy()
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    generateName,
			Namespace:       owner.GetNamespace(),
			Labels:          t.Labels,
			Annotations:     t.Annotations,
			Finalizers:      t.Finalizers,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner, gvk)},
		},
		Spec: t.Spec,
	}
}

// SlowStart calls fn count times in batches of 1, 2, 4, ... calls run
// concurrently, and stops after the first batch in which a call failed
// (kube's slowStartBatch: a quota or a webhook that refuses the first pod
// refuses the others too). It returns how many calls succeeded and the
// batch's errors; count minus succeeded minus failed calls were skipped.
func SlowStart(count int, fn func() error) (succeeded int, err error) {
	for batch := 1; count > 0; batch = min(2*batch, count) {
		batch = min(batch, count)
		var wg sync.WaitGroup
		var mu sync.Mutex // guards errs and succeeded
		var errs []error
		for range batch {
			wg.Go(func() {
				err := fn()
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
				} else {
					succeeded++
				}
			})
		}
		wg.Wait()
		if len(errs) > 0 {
			return succeeded, errors.Join(errs...)
		}
		count -= batch
	}
	return succeeded, nil
}
