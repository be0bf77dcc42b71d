package cronjob

import (
	"maps"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// jobFor makes cj's Job for the time t: the template's labels and
// annotations, the scheduled-timestamp annotation (RFC 3339 in cj's time
// zone), and cj as controller.
func jobFor(cj *batchv1.CronJob, t time.Time) (*batchv1.Job, error) {
	zone := ""
	if cj.Spec.TimeZone != nil {
		zone = *cj.Spec.TimeZone
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return nil, err
	}
	annotations := maps.Clone(cj.Spec.JobTemplate.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[batchv1.CronJobScheduledTimestampAnnotation] = t.In(loc).Format(time.RFC3339)
	labels := maps.Clone(cj.Spec.JobTemplate.Labels)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: jobName(cj, t), Namespace: cj.Namespace,
		Labels: labels, Annotations: annotations,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj, kind)}}}
	cj.Spec.JobTemplate.Spec.DeepCopyInto(&job.Spec)
	return job, nil
}

// reference is status.active's entry for job.
func reference(job *batchv1.Job) corev1.ObjectReference {
	return corev1.ObjectReference{Kind: "Job", APIVersion: batchv1.SchemeGroupVersion.String(),
		Namespace: job.Namespace, Name: job.Name, UID: job.UID, ResourceVersion: job.ResourceVersion}
}

// finished reports whether job is Complete or Failed, and which.
func finished(job *batchv1.Job) (bool, batchv1.JobConditionType) {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true, c.Type
		}
	}
	return false, ""
}

func inActive(cj *batchv1.CronJob, uid types.UID) bool {
	for _, r := range cj.Status.Active {
		if r.UID == uid {
			return true
		}
	}
	return false
}

func activeByName(cj *batchv1.CronJob, name string) bool {
	for _, r := range cj.Status.Active {
		if r.Name == name && r.Namespace == cj.Namespace {
			return true
		}
	}
	return false
}

func removeActive(cj *batchv1.CronJob, uid types.UID) {
	out := []corev1.ObjectReference{}
	for _, r := range cj.Status.Active {
		if r.UID != uid {
			out = append(out, r)
		}
	}
	cj.Status.Active = out
}
