package registry

import (
	"maps"
	"math"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Defaults of batch/v1 Jobs and CronJobs.

// The unprefixed job labels kube still sets next to the
// batch.kubernetes.io/ ones.
const (
	legacyJobNameLabel       = "job-name"
	legacyControllerUIDLabel = "controller-uid"
)

// prepareJob: a create cannot set status; unless the job asks for a
// manual selector, its pods are selected by the job's uid, as kube's job
// strategy does: the template gets the job-name and controller-uid labels
// (legacy and batch.kubernetes.io/ forms) and the selector matches
// batch.kubernetes.io/controller-uid. It needs the uid set. A job without
// labels then gets the template's (defaultJob: kube applies it again when
// it reads the job back).
func prepareJob(obj runtime.Object) {
	job := obj.(*batchv1.Job)
	job.Status = batchv1.JobStatus{}
	if !isTrue(job.Spec.ManualSelector) {
		generateJobSelector(job)
	}
	defaultJob(job)
}

// generateJobSelector adds the job's labels to its template and selects
// them.
func generateJobSelector(job *batchv1.Job) {
	t := &job.Spec.Template
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	uid := string(job.UID)
	for k, v := range map[string]string{
		legacyJobNameLabel:         job.Name,
		batchv1.JobNameLabel:       job.Name,
		legacyControllerUIDLabel:   uid,
		batchv1.ControllerUidLabel: uid,
	} {
		if _, ok := t.Labels[k]; !ok {
			t.Labels[k] = v
		}
	}
	if job.Spec.Selector == nil {
		job.Spec.Selector = &metav1.LabelSelector{}
	}
	if job.Spec.Selector.MatchLabels == nil {
		job.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, ok := job.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel]; !ok {
		job.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] = uid
	}
}

// defaultJob follows SetDefaults_Job: one completion and one pod at a time
// when neither is set, 6 retries (unlimited with a per-index limit),
// NonIndexed, not suspended, pods replaced once terminated or failed (once
// failed with a pod failure policy), automatic selector.
func defaultJob(obj runtime.Object) {
	job := obj.(*batchv1.Job)
	sp := &job.Spec
	if sp.Completions == nil && sp.Parallelism == nil {
		sp.Completions = defaultInt32(nil, 1)
	}
	sp.Parallelism = defaultInt32(sp.Parallelism, 1)
	if sp.BackoffLimit == nil {
		limit := int32(6)
		if sp.BackoffLimitPerIndex != nil {
			limit = math.MaxInt32
		}
		sp.BackoffLimit = &limit
	}
	if sp.Template.Labels != nil && len(job.Labels) == 0 {
		job.Labels = maps.Clone(sp.Template.Labels)
	}
	sp.CompletionMode = defaultPtr(sp.CompletionMode, batchv1.NonIndexedCompletion)
	sp.Suspend = defaultPtr(sp.Suspend, false)
	if sp.PodReplacementPolicy == nil {
		policy := batchv1.TerminatingOrFailed
		if sp.PodFailurePolicy != nil {
			policy = batchv1.Failed
		}
		sp.PodReplacementPolicy = &policy
	}
	sp.ManualSelector = defaultPtr(sp.ManualSelector, false)
	defaultJobSpecRest(sp)
}

// defaultJobSpecRest defaults what lies inside a job spec: the pod
// template and pod failure policy patterns (also used for a CronJob's job
// template, whose spec gets no SetDefaults_Job).
func defaultJobSpecRest(sp *batchv1.JobSpec) {
	defaultPodSpec(&sp.Template.Spec)
	if p := sp.PodFailurePolicy; p != nil {
		for i := range p.Rules {
			for j := range p.Rules[i].OnPodConditions {
				defaultString(&p.Rules[i].OnPodConditions[j].Status, "True")
			}
		}
	}
}

// prepareCronJob: a create cannot set status.
func prepareCronJob(obj runtime.Object) {
	obj.(*batchv1.CronJob).Status = batchv1.CronJobStatus{}
}

// defaultCronJob: concurrent runs allowed, not suspended, 3 successful and
// 1 failed jobs kept.
func defaultCronJob(obj runtime.Object) {
	cj := obj.(*batchv1.CronJob)
	sp := &cj.Spec
	defaultString(&sp.ConcurrencyPolicy, batchv1.AllowConcurrent)
	sp.Suspend = defaultPtr(sp.Suspend, false)
	sp.SuccessfulJobsHistoryLimit = defaultInt32(sp.SuccessfulJobsHistoryLimit, 3)
	sp.FailedJobsHistoryLimit = defaultInt32(sp.FailedJobsHistoryLimit, 1)
	defaultJobSpecRest(&sp.JobTemplate.Spec)
}
