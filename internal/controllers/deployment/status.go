package deployment

import (
	"context"
	"fmt"
	"math"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The reasons of the Progressing and Available conditions (kube's, which
// kubectl rollout status and users' tooling read).
const (
	reasonNewRSAvailable = "NewReplicaSetAvailable"
	reasonRSUpdated      = "ReplicaSetUpdated"
	reasonTimedOut       = "ProgressDeadlineExceeded"
	reasonMinAvailable   = "MinimumReplicasAvailable"
	reasonMinUnavailable = "MinimumReplicasUnavailable"
	reasonPaused         = "DeploymentPaused"
	reasonResumed        = "DeploymentResumed"
)

// calculateStatus is d's status from its ReplicaSets: counts summed over
// all of them (updated: the new one's), the Available condition; other
// conditions are carried over.
func calculateStatus(d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) appsv1.DeploymentStatus {
	st := appsv1.DeploymentStatus{ObservedGeneration: d.Generation, CollisionCount: d.Status.CollisionCount,
		Conditions: append([]appsv1.DeploymentCondition(nil), d.Status.Conditions...)}
	for _, rs := range all {
		st.Replicas += rs.Status.Replicas
		st.ReadyReplicas += rs.Status.ReadyReplicas
		st.AvailableReplicas += rs.Status.AvailableReplicas
	}
	if newRS != nil {
		st.UpdatedReplicas = newRS.Status.Replicas
	}
	st.UnavailableReplicas = max(0, replicasOf(d)-st.AvailableReplicas)
	if st.AvailableReplicas >= replicasOf(d)-maxUnavailable(d) {
		setCondition(&st, newCondition(appsv1.DeploymentAvailable, corev1.ConditionTrue, reasonMinAvailable, "Deployment has minimum availability."))
	} else {
		setCondition(&st, newCondition(appsv1.DeploymentAvailable, corev1.ConditionFalse, reasonMinUnavailable, "Deployment does not have minimum availability."))
	}
	return st
}

// complete reports whether st shows every desired pod updated and
// available and no other pod left.
func complete(d *appsv1.Deployment, st *appsv1.DeploymentStatus) bool {
	n := replicasOf(d)
	return st.UpdatedReplicas == n && st.Replicas == n && st.AvailableReplicas == n && st.ObservedGeneration >= d.Generation
}

// progressing reports whether st moved the rollout on from d's status.
func progressing(d *appsv1.Deployment, st *appsv1.DeploymentStatus) bool {
	o := d.Status
	return st.UpdatedReplicas > o.UpdatedReplicas || st.Replicas-st.UpdatedReplicas < o.Replicas-o.UpdatedReplicas ||
		st.ReadyReplicas > o.ReadyReplicas || st.AvailableReplicas > o.AvailableReplicas
}

func hasProgressDeadline(d *appsv1.Deployment) bool {
	return d.Spec.ProgressDeadlineSeconds != nil && *d.Spec.ProgressDeadlineSeconds != math.MaxInt32
}

// syncRolloutStatus writes d's status with the Progressing condition of
// the rollout: NewReplicaSetAvailable once complete, ReplicaSetUpdated
// while it moves, ProgressDeadlineExceeded when it has not moved for
// progressDeadlineSeconds.
func (c *controller) syncRolloutStatus(ctx context.Context, d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) error {
	st := calculateStatus(d, all, newRS)
	if !hasProgressDeadline(d) {
		removeCondition(&st, appsv1.DeploymentProgressing)
	}
	cur := condition(d.Status.Conditions, appsv1.DeploymentProgressing)
	done := st.Replicas == st.UpdatedReplicas && cur != nil && cur.Reason == reasonNewRSAvailable
	if hasProgressDeadline(d) && !done && newRS != nil {
		var next *appsv1.DeploymentCondition
		switch {
		case complete(d, &st):
			next = newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, reasonNewRSAvailable,
				fmt.Sprintf("ReplicaSet %q has successfully progressed.", newRS.Name))
		case progressing(d, &st):
			next = newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, reasonRSUpdated,
				fmt.Sprintf("ReplicaSet %q is progressing.", newRS.Name))
		case timedOut(d, time.Now()):
			next = newCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, reasonTimedOut,
				fmt.Sprintf("ReplicaSet %q has timed out progressing.", newRS.Name))
		}
		if next != nil {
			if cur != nil && cur.Status == next.Status {
				next.LastTransitionTime = cur.LastTransitionTime
			}
			if cur == nil || cur.Status != next.Status || cur.Reason != next.Reason || next.Reason == reasonRSUpdated {
				removeCondition(&st, appsv1.DeploymentProgressing)
				setCondition(&st, next)
			}
		}
	}
	if err := c.updateStatus(ctx, d, st); err != nil {
		return err
	}
	c.requeueStuck(d, &st)
	return nil
}

// timedOut reports whether d's rollout has not progressed within its
// deadline.
func timedOut(d *appsv1.Deployment, now time.Time) bool {
	cond := condition(d.Status.Conditions, appsv1.DeploymentProgressing)
	switch {
	case !hasProgressDeadline(d) || cond == nil || cond.Reason == reasonNewRSAvailable:
		return false
	case cond.Reason == reasonTimedOut:
		return true
	}
	return cond.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second).Before(now)
}

// requeueStuck looks at d again when its progress deadline passes.
func (c *controller) requeueStuck(d *appsv1.Deployment, st *appsv1.DeploymentStatus) {
	cond := condition(st.Conditions, appsv1.DeploymentProgressing)
	if !hasProgressDeadline(d) || cond == nil || cond.Reason == reasonNewRSAvailable || cond.Reason == reasonTimedOut || complete(d, st) {
		return
	}
	after := time.Until(cond.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second))
	c.loop.Queue.AddAfter(d.Namespace+"/"+d.Name, max(after, time.Second))
}

// checkPaused records a pause or a resume in the Progressing condition.
func (c *controller) checkPaused(ctx context.Context, d *appsv1.Deployment) error {
	if !hasProgressDeadline(d) {
		return nil
	}
	cond := condition(d.Status.Conditions, appsv1.DeploymentProgressing)
	if cond != nil && cond.Reason == reasonTimedOut {
		return nil
	}
	paused := cond != nil && cond.Reason == reasonPaused
	var next *appsv1.DeploymentCondition
	switch {
	case d.Spec.Paused && !paused:
		next = newCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, reasonPaused, "Deployment is paused")
	case !d.Spec.Paused && paused:
		next = newCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, reasonResumed, "Deployment is resumed")
	default:
		return nil
	}
	st := d.Status.DeepCopy()
	removeCondition(st, appsv1.DeploymentProgressing)
	setCondition(st, next)
	return c.writeStatus(ctx, d, *st)
}

// updateStatus writes st if it differs from d's.
func (c *controller) updateStatus(ctx context.Context, d *appsv1.Deployment, st appsv1.DeploymentStatus) error {
	if apiequality.Semantic.DeepEqual(d.Status, st) {
		return nil
	}
	return c.writeStatus(ctx, d, st)
}

// writeStatus writes st as d's status (with d's resourceVersion) and
// makes d the result.
func (c *controller) writeStatus(ctx context.Context, d *appsv1.Deployment, st appsv1.DeploymentStatus) error {
	cp := d.DeepCopy()
	cp.Status = st
	out, err := c.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	*d = *out
	return nil
}

func newCondition(t appsv1.DeploymentConditionType, s corev1.ConditionStatus, reason, msg string) *appsv1.DeploymentCondition {
	now := metav1.Now()
	return &appsv1.DeploymentCondition{Type: t, Status: s, Reason: reason, Message: msg, LastUpdateTime: now, LastTransitionTime: now}
}

func condition(conds []appsv1.DeploymentCondition, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// setCondition sets c, unless one of its type with the same status and
// reason is there already; a change of reason keeps the transition time.
func setCondition(st *appsv1.DeploymentStatus, c *appsv1.DeploymentCondition) {
	cur := condition(st.Conditions, c.Type)
	if cur != nil && cur.Status == c.Status && cur.Reason == c.Reason {
		return
	}
	if cur != nil && cur.Status == c.Status {
		c.LastTransitionTime = cur.LastTransitionTime
	}
	removeCondition(st, c.Type)
	st.Conditions = append(st.Conditions, *c)
}

func removeCondition(st *appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) {
	out := st.Conditions[:0:0]
	for _, c := range st.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	st.Conditions = out
}
