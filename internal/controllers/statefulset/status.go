package statefulset

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// countPods sets st's replica counts from the pods of lists: replicas
// (created), readyReplicas (Running and Ready), availableReplicas (ready
// for minReadySeconds), currentReplicas and updatedReplicas (created, not
// terminating, at the current or update revision).
func countPods(st *appsv1.StatefulSetStatus, minReady int32, current, update *appsv1.ControllerRevision, now time.Time,
	lists ...[]*corev1.Pod) {
	st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.CurrentReplicas, st.UpdatedReplicas = 0, 0, 0, 0, 0
	for _, pods := range lists {
		for _, p := range pods {
			if isCreated(p) {
				st.Replicas++
			}
			if isRunningAndReady(p) {
				st.ReadyReplicas++
				if isAvailable(p, minReady, now) {
					st.AvailableReplicas++
				}
			}
			if isCreated(p) && !isTerminating(p) {
				switch rev := revisionOf(p); {
				case rev == current.Name && rev == update.Name:
					st.CurrentReplicas++
					st.UpdatedReplicas++
				case rev == current.Name:
					st.CurrentReplicas++
				case rev == update.Name:
					st.UpdatedReplicas++
				}
			}
		}
	}
}

// completeUpdate: once every replica is updated and ready, the update
// revision becomes the current one.
func completeUpdate(set *appsv1.StatefulSet, st *appsv1.StatefulSetStatus) {
	n := int32(replicasOf(set))
	if st.UpdatedReplicas == n && st.ReadyReplicas == n && st.Replicas == n {
		st.CurrentReplicas, st.CurrentRevision = st.UpdatedReplicas, st.UpdateRevision
	}
}

// writeStatus completes a finished update and writes st when it differs
// from set's (with set's resourceVersion: a stale view ends in a conflict
// and a retry).
func (c *controller) writeStatus(ctx context.Context, key string, set *appsv1.StatefulSet, st *appsv1.StatefulSetStatus) error {
	completeUpdate(set, st)
	if apiequality.Semantic.DeepEqual(&set.Status, st) {
		return nil
	}
	cp := set.DeepCopy()
	cp.Status = *st
	updated, err := c.client.AppsV1().StatefulSets(set.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{})
	if err == nil {
		c.written.wrote(key, setsResource, updated.ResourceVersion)
	}
	return err
}
