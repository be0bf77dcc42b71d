package replicaset

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/litek8s/litek8s/internal/controllers/workload"
)

// calculateStatus is rs's status given the active pods it controls; a
// failed create sets the ReplicaFailure condition, a sync without error
// clears it.
func calculateStatus(rs *appsv1.ReplicaSet, pods []*corev1.Pod, manageErr error, now time.Time) appsv1.ReplicaSetStatus {
	st := *rs.Status.DeepCopy()
	st.Replicas = int32(len(pods))
	st.FullyLabeledReplicas, st.ReadyReplicas, st.AvailableReplicas = 0, 0, 0
	tpl := labels.Set(rs.Spec.Template.Labels).AsSelectorPreValidated()
	for _, p := range pods {
		if tpl.Matches(labels.Set(p.Labels)) {
			st.FullyLabeledReplicas++
		}
		if workload.IsReady(p) {
			st.ReadyReplicas++
			if workload.IsAvailable(p, rs.Spec.MinReadySeconds, now) {
				st.AvailableReplicas++
			}
		}
	}
	st.ObservedGeneration = rs.Generation
	failing := manageErr != nil && len(pods) < int(replicas(rs))
	st.Conditions = setFailure(st.Conditions, failing, manageErr, now)
	return st
}

func setFailure(conds []appsv1.ReplicaSetCondition, failing bool, err error, now time.Time) []appsv1.ReplicaSetCondition {
	out := conds[:0:0]
	for _, c := range conds {
		if c.Type != appsv1.ReplicaSetReplicaFailure {
			out = append(out, c)
		}
	}
	if failing {
		out = append(out, appsv1.ReplicaSetCondition{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue,
			Reason: "FailedCreate", Message: err.Error(), LastTransitionTime: metav1.NewTime(now)})
		for _, c := range conds { // keep the first failure's time
			if c.Type == appsv1.ReplicaSetReplicaFailure {
				out[len(out)-1].LastTransitionTime = c.LastTransitionTime
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// updateStatus writes st when it differs from rs's (with rs's
// resourceVersion: a stale view ends in a conflict and a retry).
func (c *controller) updateStatus(ctx context.Context, rs *appsv1.ReplicaSet, st appsv1.ReplicaSetStatus) error {
	if apiequality.Semantic.DeepEqual(rs.Status, st) {
		return nil
	}
	cp := rs.DeepCopy()
	cp.Status = st
	return c.src.writeStatus(ctx, c.client, cp)
}
