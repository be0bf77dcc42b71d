package daemonset

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/controllers/workload"
)

// calculateStatus counts, over the nodes, as kube's
// updateDaemonSetStatus: a node that should run ds is desired, scheduled
// when it has a running pod, and its oldest running pod decides ready,
// available and updated; a node that should not run ds but has a pod is
// misscheduled.
func calculateStatus(ds *appsv1.DaemonSet, nodes []*corev1.Node, byNode map[string][]*corev1.Pod, hash string, now time.Time) appsv1.DaemonSetStatus {
	st := *ds.Status.DeepCopy()
	var desired, current, misscheduled, ready, available, updated int32
	for _, node := range nodes {
		pods := running(byNode[node.Name])
		if !place(ds, node).shouldRun {
			if len(pods) > 0 {
				misscheduled++
			}
			continue
		}
		desired++
		if len(pods) == 0 {
			continue
		}
		current++
		p := pods[0]
		if workload.IsReady(p) {
			ready++
			if workload.IsAvailable(p, ds.Spec.MinReadySeconds, now) {
				available++
			}
		}
		if isUpdated(p, hash) {
			updated++
		}
	}
	st.DesiredNumberScheduled, st.CurrentNumberScheduled, st.NumberMisscheduled = desired, current, misscheduled
	st.NumberReady, st.NumberAvailable, st.UpdatedNumberScheduled = ready, available, updated
	st.NumberUnavailable = desired - available
	st.ObservedGeneration = ds.Generation
	return st
}

// updateStatus writes st when it differs from ds's (with ds's
// resourceVersion: a stale view ends in a conflict and a retry).
func (c *controller) updateStatus(ctx context.Context, ds *appsv1.DaemonSet, st appsv1.DaemonSetStatus) error {
	if apiequality.Semantic.DeepEqual(ds.Status, st) {
		return nil
	}
	cp := ds.DeepCopy()
	cp.Status = st
	_, err := c.client.AppsV1().DaemonSets(ds.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{})
	return err
}
