package cronjob

import (
	"context"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
)

// cleanup deletes cj's finished Jobs beyond successfulJobsHistoryLimit and
// failedJobsHistoryLimit, oldest first; it reports whether cj's status
// changed.
func (c *controller) cleanup(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) bool {
	var succeeded, failed []*batchv1.Job
	for _, j := range jobs {
		switch _, cond := finished(j); cond {
		case batchv1.JobComplete:
			succeeded = append(succeeded, j)
		case batchv1.JobFailed:
			failed = append(failed, j)
		}
	}
	changed := false
	if l := cj.Spec.SuccessfulJobsHistoryLimit; l != nil && c.removeOldest(ctx, cj, succeeded, int(*l)) {
		changed = true
	}
	if l := cj.Spec.FailedJobsHistoryLimit; l != nil && c.removeOldest(ctx, cj, failed, int(*l)) {
		changed = true
	}
	return changed
}

// removeOldest deletes all but the keep newest of jobs.
func (c *controller) removeOldest(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job, keep int) bool {
	if len(jobs) <= keep {
		return false
	}
	slices.SortFunc(jobs, byStartTime)
	changed := false
	for _, j := range jobs[:len(jobs)-keep] {
		if c.deleteJob(ctx, cj, j) == nil {
			changed = true
		}
	}
	return changed
}

// byStartTime orders Jobs by status.startTime (unstarted ones last), then
// by name, as kube's byJobStartTime.
func byStartTime(a, b *batchv1.Job) int {
	switch sa, sb := a.Status.StartTime, b.Status.StartTime; {
	case sa == nil && sb != nil:
		return 1
	case sa != nil && sb == nil:
		return -1
	case sa != nil && !sa.Equal(sb):
		return sa.Time.Compare(sb.Time)
	}
	return strings.Compare(a.Name, b.Name)
}
