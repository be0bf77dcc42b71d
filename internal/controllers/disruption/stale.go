package disruption

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// Stale DisruptionTarget conditions (kube's syncStalePodDisruption): an
// eviction marks its pod DisruptionTarget=True before deleting it; when
// the pod is still not being deleted Config.StalePodDisruptionTimeout
// later (the deletion failed), the condition is set back to False. The
// kubelet's own condition (reason TerminationByKubelet) and terminal pods
// are left alone.

// podPrefix marks the queue keys of pods (budgets' keys are namespace/name).
const podPrefix = "pod/"

// staleAfter tells whether pod carries a DisruptionTarget condition to
// reset, and in how long.
func (c *controller) staleAfter(pod *corev1.Pod) (bool, time.Duration) {
	if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false, 0
	}
	cond := disruptionTarget(pod)
	if cond == nil || cond.Status != corev1.ConditionTrue || cond.Reason == corev1.PodReasonTerminationByKubelet {
		return false, 0
	}
	return true, max(c.cfg.StalePodDisruptionTimeout-c.now().Sub(cond.LastTransitionTime.Time), 0)
}

func disruptionTarget(pod *corev1.Pod) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.DisruptionTarget {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// watchStale queues a pod whose condition will be stale.
func (c *controller) watchStale(pod *corev1.Pod) {
	if ok, after := c.staleAfter(pod); ok {
		c.loop.Queue.AddAfter(podPrefix+pod.Namespace+"/"+pod.Name, after)
	}
}

// syncStalePod resets the pod's stale condition.
func (c *controller) syncStalePod(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(strings.TrimPrefix(key, podPrefix))
	if err != nil {
		return err
	}
	pod, err := c.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	stale, after := c.staleAfter(pod)
	if !stale {
		return nil
	}
	if after > 0 {
		c.loop.Queue.AddAfter(key, after)
		return nil
	}
	out := pod.DeepCopy()
	cond := disruptionTarget(out)
	cond.Status, cond.LastTransitionTime = corev1.ConditionFalse, metav1.NewTime(c.now())
	cond.Reason, cond.Message = "", ""
	_, err = c.client.CoreV1().Pods(ns).UpdateStatus(ctx, out, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
