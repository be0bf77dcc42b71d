package job

import (
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// perIndex reports whether job limits retries per index
// (spec.backoffLimitPerIndex, Indexed jobs only).
func perIndex(job *batchv1.Job) bool {
	return indexed(job) && job.Spec.BackoffLimitPerIndex != nil
}

// failureCount is the failures of pod's index before pod, from the
// batch.kubernetes.io/job-index-failure-count annotation the controller
// puts on the pods it creates.
func failureCount(pod *corev1.Pod) int32 {
	n, err := strconv.ParseInt(pod.Annotations[batchv1.JobIndexFailureCountAnnotation], 10, 32)
	if err != nil || n < 0 {
		return 0
	}
	return int32(n)
}

// setFailureCount records n earlier failures of pod's index on pod.
func setFailureCount(pod *corev1.Pod, n int32) {
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[batchv1.JobIndexFailureCountAnnotation] = strconv.Itoa(int(n))
}

// indexFailure is why job fails for its failed indexes ("" if it does
// not): more of them than spec.maxFailedIndexes, or every index finished
// and some failed.
func indexFailure(job *batchv1.Job, succeeded, failed map[int]bool) (reason, msg string) {
	if !perIndex(job) || len(failed) == 0 {
		return "", ""
	}
	if m := job.Spec.MaxFailedIndexes; m != nil && len(failed) > int(*m) {
		return batchv1.JobReasonMaxFailedIndexesExceeded, "Job has exceeded the specified maximal number of failed indexes"
	}
	if len(succeeded)+len(failed) >= completions(job) {
		return batchv1.JobReasonFailedIndexes, "Job has failed indexes"
	}
	return "", ""
}
