package job

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// matchFailurePolicy returns the action of the first rule of policy that
// the failed pod matches (nil when none does: the failure counts) and, as
// kube words it, why. A rule on exit codes matches a terminated container
// (the named one, or any) whose non-zero exit code is In (or NotIn) the
// values; a rule on pod conditions matches a condition of the pod with
// the pattern's type and status.
func matchFailurePolicy(policy *batchv1.PodFailurePolicy, pod *corev1.Pod) (*batchv1.PodFailurePolicyAction, string) {
	if policy == nil {
		return nil, ""
	}
	for i, r := range policy.Rules {
		if req := r.OnExitCodes; req != nil {
			if cs := matchExitCodes(req, pod); cs != nil {
				return &r.Action, fmt.Sprintf("Container %s for pod %s/%s failed with exit code %d matching %s rule at index %d",
					cs.Name, pod.Namespace, pod.Name, cs.State.Terminated.ExitCode, r.Action, i)
			}
		}
		for _, pat := range r.OnPodConditions {
			for _, c := range pod.Status.Conditions {
				if c.Type == pat.Type && c.Status == pat.Status {
					return &r.Action, fmt.Sprintf("Pod %s/%s has condition %s matching %s rule at index %d",
						pod.Namespace, pod.Name, c.Type, r.Action, i)
				}
			}
		}
	}
	return nil, ""
}

func matchExitCodes(req *batchv1.PodFailurePolicyOnExitCodesRequirement, pod *corev1.Pod) *corev1.ContainerStatus {
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for i := range list {
			cs := &list[i]
			t := cs.State.Terminated
			if t == nil || t.ExitCode == 0 || req.ContainerName != nil && *req.ContainerName != cs.Name {
				continue
			}
			if in := slices.Contains(req.Values, t.ExitCode); in == (req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn) {
				return cs
			}
		}
	}
	return nil
}
