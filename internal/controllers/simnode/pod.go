package simnode

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// jobNameLabel marks the pods of a Job.
const jobNameLabel = "batch.kubernetes.io/job-name"

// syncPod plays the kubelet for one pod bound to a simulated node.
func (s *SimNodes) syncPod(ctx context.Context, key string) (time.Duration, error) {
	obj, exists, _ := s.pods.GetByKey(key)
	if !exists {
		return 0, nil
	}
	pod := obj.(*corev1.Pod)
	i, mine := s.nodeNumber(pod.Spec.NodeName)
	switch {
	case !mine:
		return 0, nil
	case pod.DeletionTimestamp != nil:
		return 0, s.deletePod(ctx, pod)
	case terminal(pod):
		s.ips.release(pod.Spec.NodeName, pod.UID)
		return 0, nil
	case pod.Status.Phase != corev1.PodRunning || pod.Status.PodIP == "":
		ip, err := s.ips.get(i, pod)
		if err != nil {
			return 0, err
		}
		p := pod.DeepCopy()
		running(p, nodeIP(i), ip, time.Now())
		if _, err := s.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			return 0, ignoreGone(err)
		}
		if jobPod(pod) {
			return max(s.cfg.JobPodDuration, time.Millisecond), nil
		}
		return 0, nil
	case jobPod(pod):
		var started time.Time
		if pod.Status.StartTime != nil {
			started = pod.Status.StartTime.Time
		}
		if left := time.Until(started.Add(s.cfg.JobPodDuration)); left > 0 {
			return left, nil
		}
		p := pod.DeepCopy()
		succeeded(p, time.Now())
		if _, err := s.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			return 0, ignoreGone(err)
		}
		s.ips.release(pod.Spec.NodeName, pod.UID)
	}
	return 0, nil
}

// deletePod finishes a deletion at once, as a kubelet does when the
// containers stopped.
func (s *SimNodes) deletePod(ctx context.Context, pod *corev1.Pod) error {
	err := s.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To(int64(0)), Preconditions: metav1.NewUIDPreconditions(string(pod.UID))})
	if err == nil {
		s.ips.release(pod.Spec.NodeName, pod.UID)
	}
	return ignoreGone(err)
}

// ignoreGone drops the errors of a pod deleted or replaced meanwhile: its
// next informer event brings it back if there is still work.
func ignoreGone(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// jobPod tells whether a Job owns pod.
func jobPod(pod *corev1.Pod) bool {
	if _, ok := pod.Labels[jobNameLabel]; ok {
		return true
	}
	for _, r := range pod.OwnerReferences {
		if r.Kind == "Job" {
			return true
		}
	}
	return false
}

// running sets the status of a pod whose containers all started.
func running(p *corev1.Pod, hostIP, podIP string, now time.Time) {
	t := metav1.NewTime(now)
	st := &p.Status
	st.Phase = corev1.PodRunning
	st.HostIP, st.HostIPs = hostIP, []corev1.HostIP{{IP: hostIP}}
	st.PodIP, st.PodIPs = podIP, []corev1.PodIP{{IP: podIP}}
	if st.StartTime == nil {
		st.StartTime = &t
	}
	for _, c := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized,
		corev1.ContainersReady, corev1.PodReady, corev1.PodScheduled} {
		setCondition(st, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue}, t)
	}
	st.InitContainerStatuses = nil
	for _, c := range p.Spec.InitContainers {
		cs := containerStatus(p, &c)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: t}
			cs.Ready, cs.Started = true, ptr.To(true)
		} else {
			cs.State.Terminated = &corev1.ContainerStateTerminated{Reason: "Completed", StartedAt: t, FinishedAt: t,
				ContainerID: cs.ContainerID}
			cs.Ready, cs.Started = true, ptr.To(false)
		}
		st.InitContainerStatuses = append(st.InitContainerStatuses, cs)
	}
	st.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		cs := containerStatus(p, &c)
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: t}
		cs.Ready, cs.Started = true, ptr.To(true)
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
}

// succeeded sets the status of a pod whose containers all exited 0.
func succeeded(p *corev1.Pod, now time.Time) {
	t := metav1.NewTime(now)
	st := &p.Status
	st.Phase = corev1.PodSucceeded
	for _, c := range []corev1.PodConditionType{corev1.ContainersReady, corev1.PodReady} {
		setCondition(st, corev1.PodCondition{Type: c, Status: corev1.ConditionFalse, Reason: "PodCompleted"}, t)
	}
	setCondition(st, corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionFalse}, t)
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		started := t
		if cs.State.Running != nil {
			started = cs.State.Running.StartedAt
		}
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed",
			StartedAt: started, FinishedAt: t, ContainerID: cs.ContainerID}}
		cs.Ready, cs.Started = false, ptr.To(false)
	}
}

func containerStatus(p *corev1.Pod, c *corev1.Container) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: "simulated://" + c.Image,
		ContainerID: "simulated://" + string(p.UID) + "/" + c.Name}
}

// setCondition sets c in st; the transition time changes with the status.
func setCondition(st *corev1.PodStatus, c corev1.PodCondition, now metav1.Time) {
	c.LastTransitionTime = now
	for i := range st.Conditions {
		if st.Conditions[i].Type == c.Type {
			if st.Conditions[i].Status == c.Status {
				c.LastTransitionTime = st.Conditions[i].LastTransitionTime
			}
			st.Conditions[i] = c
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}
