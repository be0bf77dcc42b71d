package nodelifecycle

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// markPodsNotReady sets the Ready condition of the pods on node to False
// while the node's own Ready is not True, as kube's MarkPodsNotReady: no
// kubelet vouches for them, so Services stop sending them traffic. The
// kubelet sets them again when it is back.
func (c *Controller) markPodsNotReady(ctx context.Context, node *corev1.Node) error {
	if nodeReady(node) {
		return nil
	}
	objs, err := c.pods.ByIndex(kit.PodNodeIndex, node.Name)
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range objs {
		pod, ok := o.(*corev1.Pod)
		if !ok || pod.Spec.NodeName != node.Name {
			continue
		}
		i := readyCondition(pod)
		if i < 0 || pod.Status.Conditions[i].Status == corev1.ConditionFalse {
			continue
		}
		p := pod.DeepCopy()
		cond := &p.Status.Conditions[i]
		cond.Status, cond.LastTransitionTime = corev1.ConditionFalse, metav1.Now()
		if _, err := c.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			if !apierrors.IsNotFound(err) {
				errs = append(errs, err)
			}
			continue
		}
		c.log.Info("pod marked not ready: its node is not ready", "pod", p.Namespace+"/"+p.Name, "node", node.Name)
		c.events.Event(p, corev1.EventTypeWarning, "NodeNotReady", "Node is not ready")
	}
	return errors.Join(errs...)
}

// podChanged queues the node of a Ready pod on a node that is not Ready,
// so that it is marked at once rather than at the next monitor pass.
func (c *Controller) podChanged(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return
	}
	if i := readyCondition(pod); i < 0 || pod.Status.Conditions[i].Status != corev1.ConditionTrue {
		return
	}
	if n, exists, _ := c.nodes.GetByKey(pod.Spec.NodeName); exists && !nodeReady(n.(*corev1.Node)) {
		c.queue.Add(pod.Spec.NodeName)
	}
}

// readyCondition is the index of pod's Ready condition, or -1.
func readyCondition(pod *corev1.Pod) int {
	for i, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return i
		}
	}
	return -1
}

// nodeReady reports whether node's Ready condition is True.
func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
