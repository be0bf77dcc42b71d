package scheduler

import (
	"context"
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// do carries out a decision: the binding, or the unschedulable report.
func (s *Scheduler) do(ctx context.Context, t task) {
	if t.fit != nil {
		s.reportUnschedulable(ctx, t)
		return
	}
	if t.wait {
		s.selectNode(ctx, t)
		return
	}
	b := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: t.pod.Namespace, Name: t.pod.Name, UID: t.pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: t.node},
	}
	err := s.client.CoreV1().Pods(t.pod.Namespace).Bind(ctx, b, metav1.CreateOptions{})
	if err != nil {
		s.cache.forget(t.key, t.pod.UID)
		if ctx.Err() != nil {
			return
		}
		s.metrics.observe(s.cfg.Name, resultError, t.start)
		if !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			s.log.Warn("binding failed", "pod", t.key, "node", t.node, "err", err)
		}
		s.queue.AddRateLimited(t.key) // a pod gone or bound is skipped then
		return
	}
	s.queue.Forget(t.key)
	s.metrics.observe(s.cfg.Name, resultScheduled, t.start)
	s.recorder.Eventf(t.pod, corev1.EventTypeNormal, "Scheduled", "Successfully assigned %s to %s", t.key, t.node)
}

// reportUnschedulable records a FailedScheduling event and sets the pod's
// PodScheduled condition to False, reason Unschedulable (a strategic merge
// patch of the status: conditions merge by type).
func (s *Scheduler) reportUnschedulable(ctx context.Context, t task) {
	msg := t.fit.Error()
	s.recorder.Event(t.pod, corev1.EventTypeWarning, "FailedScheduling", msg)
	cond := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: msg, LastTransitionTime: metav1.NewTime(time.Now())}
	for _, c := range t.pod.Status.Conditions {
		if c.Type != corev1.PodScheduled {
			continue
		}
		if c.Status == cond.Status && c.Reason == cond.Reason && c.Message == cond.Message {
			return
		}
		if c.Status == cond.Status {
			cond.LastTransitionTime = c.LastTransitionTime
		}
	}
	patch, err := json.Marshal(map[string]any{
		// The pod as decided on: a pod bound or changed since keeps its
		// status (a conflict; a pod still pending is retried anyway).
		"metadata": map[string]any{"uid": t.pod.UID, "resourceVersion": t.pod.ResourceVersion},
		"status":   map[string]any{"conditions": []corev1.PodCondition{cond}},
	})
	if err != nil {
		return
	}
	_, err = s.client.CoreV1().Pods(t.pod.Namespace).Patch(ctx, t.pod.Name, types.StrategicMergePatchType, patch,
		metav1.PatchOptions{}, "status")
	if err != nil && ctx.Err() == nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		s.log.Debug("recording an unschedulable pod", "pod", t.key, "err", err)
	}
}

// selectNode writes the chosen node on the pod's WaitForFirstConsumer
// claims that have none (annotation volume.kubernetes.io/selected-node,
// which tells the PV binder and provisioners where to make the volume).
// The pod is bound once they are.
func (s *Scheduler) selectNode(ctx context.Context, t task) {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{annSelectedNode: t.node}}})
	if err != nil {
		return
	}
	for _, name := range t.selectClaims {
		_, err := s.client.CoreV1().PersistentVolumeClaims(t.pod.Namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
		if err != nil && ctx.Err() == nil {
			s.log.Warn("selecting a node for a claim", "pod", t.key, "claim", name, "node", t.node, "err", err)
			s.queue.AddRateLimited(t.key)
			return
		}
	}
}
