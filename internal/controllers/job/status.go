package job

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func conditionTrue(st *batchv1.JobStatus, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t && st.Conditions[i].Status == corev1.ConditionTrue {
			return &st.Conditions[i]
		}
	}
	return nil
}

// finished reports whether job is Complete or Failed.
func finished(job *batchv1.Job) bool {
	return conditionTrue(&job.Status, batchv1.JobComplete) != nil || conditionTrue(&job.Status, batchv1.JobFailed) != nil
}

func finishTime(job *batchv1.Job) time.Time {
	if job.Status.CompletionTime != nil {
		return job.Status.CompletionTime.Time
	}
	if c := conditionTrue(&job.Status, batchv1.JobFailed); c != nil {
		return c.LastTransitionTime.Time
	}
	return job.CreationTimestamp.Time
}

// failure returns why job fails now for its failed pods or its deadline
// ("" if it does not).
func failure(job *batchv1.Job, st *batchv1.JobStatus, now time.Time) (reason, msg string) {
	limit := int32(6)
	if job.Spec.BackoffLimit != nil {
		limit = *job.Spec.BackoffLimit
	}
	if st.Failed > limit {
		return batchv1.JobReasonBackoffLimitExceeded, "Job has reached the specified backoff limit"
	}
	if d := job.Spec.ActiveDeadlineSeconds; d != nil && st.StartTime != nil &&
		!now.Before(st.StartTime.Add(time.Duration(*d)*time.Second)) {
		return batchv1.JobReasonDeadlineExceeded, "Job was active longer than specified deadline"
	}
	return "", ""
}

// succeeded reports whether job reached its completions (for a work
// queue: one pod succeeded and none is left running).
func succeeded(job *batchv1.Job, st *batchv1.JobStatus, active int) bool {
	if job.Spec.Completions == nil {
		return st.Succeeded > 0 && active == 0
	}
	return st.Succeeded >= *job.Spec.Completions
}

// decided returns the interim condition (SuccessCriteriaMet or
// FailureTarget) once set: the Job's outcome is known, its pods are
// being stopped.
func decided(st *batchv1.JobStatus) *batchv1.JobCondition {
	if c := conditionTrue(st, batchv1.JobFailureTarget); c != nil {
		return c
	}
	return conditionTrue(st, batchv1.JobSuccessCriteriaMet)
}

// setCondition adds the condition t (True) unless st has it.
func setCondition(st *batchv1.JobStatus, t batchv1.JobConditionType, reason, msg string, now time.Time) {
	if conditionTrue(st, t) == nil {
		ts := metav1.NewTime(now)
		st.Conditions = append(st.Conditions, batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue,
			Reason: reason, Message: msg, LastProbeTime: ts, LastTransitionTime: ts})
	}
}

// setSuspended keeps the Suspended condition in line with spec.suspend; a
// resumed Job starts its clock again.
func setSuspended(st *batchv1.JobStatus, suspended bool, now time.Time) {
	i := slices.IndexFunc(st.Conditions, func(c batchv1.JobCondition) bool { return c.Type == batchv1.JobSuspended })
	t := metav1.NewTime(now)
	switch {
	case suspended && (i < 0 || st.Conditions[i].Status != corev1.ConditionTrue):
		c := batchv1.JobCondition{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue, Reason: "JobSuspended",
			Message: "Job suspended", LastProbeTime: t, LastTransitionTime: t}
		if i < 0 {
			st.Conditions = append(st.Conditions, c)
		} else {
			st.Conditions[i] = c
		}
	case !suspended && i >= 0 && st.Conditions[i].Status == corev1.ConditionTrue:
		st.Conditions[i] = batchv1.JobCondition{Type: batchv1.JobSuspended, Status: corev1.ConditionFalse, Reason: "JobResumed",
			Message: "Job resumed", LastProbeTime: t, LastTransitionTime: t}
		st.StartTime = nil
	}
}

func indexed(job *batchv1.Job) bool {
	return job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == batchv1.IndexedCompletion
}

// nextIndexes returns the n lowest indexes neither succeeded nor running.
func nextIndexes(job *batchv1.Job, v view, n int) []int {
	if !indexed(job) || job.Spec.Completions == nil {
		return nil
	}
	var out []int
	for i := 0; i < int(*job.Spec.Completions) && len(out) < n; i++ {
		if !v.succeededIdx[i] && !v.activeIdx[i] && !v.failedIdx[i] {
			out = append(out, i)
		}
	}
	return out
}

// setIndex makes pod the one of index i: the annotation and label, the
// hostname "<job>-<i>" and the JOB_COMPLETION_INDEX variable.
func setIndex(pod *corev1.Pod, job *batchv1.Job, i int) {
	s := strconv.Itoa(i)
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Annotations[batchv1.JobCompletionIndexAnnotation] = s
	pod.Labels[batchv1.JobCompletionIndexAnnotation] = s
	pod.GenerateName = fmt.Sprintf("%s-%d-", job.Name, i)
	pod.Spec.Hostname = fmt.Sprintf("%s-%d", job.Name, i)
	env := corev1.EnvVar{Name: "JOB_COMPLETION_INDEX", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
		FieldPath: fmt.Sprintf("metadata.annotations['%s']", batchv1.JobCompletionIndexAnnotation)}}}
	for j := range pod.Spec.Containers {
		pod.Spec.Containers[j].Env = append(pod.Spec.Containers[j].Env, env)
	}
	for j := range pod.Spec.InitContainers {
		pod.Spec.InitContainers[j].Env = append(pod.Spec.InitContainers[j].Env, env)
	}
}

// formatIndexes writes a set of indexes as kube's completedIndexes:
// ascending, runs as "a-b", comma-separated.
func formatIndexes(set map[int]bool) string {
	idx := make([]int, 0, len(set))
	for i := range set {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	var b strings.Builder
	for k := 0; k < len(idx); {
		j := k
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j == k {
			fmt.Fprintf(&b, "%d", idx[k])
		} else {
			fmt.Fprintf(&b, "%d-%d", idx[k], idx[j])
		}
		k = j + 1
	}
	return b.String()
}
