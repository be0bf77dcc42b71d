package cronjob

import (
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// sync reconciles one CronJob: it forgets finished and vanished Jobs,
// deletes those beyond the history limits, starts the Job of a due time,
// writes status once, and says when to look again (nil: only when
// something changes).
func (c *controller) sync(ctx context.Context, key string) (*time.Duration, error) {
	cached, ok, err := kit.Cached(key, func(ns, name string) (*batchv1.CronJob, error) {
		return c.cronJobs.CronJobs(ns).Get(name)
	}, nil)
	if !ok {
		return nil, err
	}
	ns, name := cached.Namespace, cached.Name
	// Read the CronJob itself from the API: the cache may not hold our
	// last status write yet, and a sync on a stale status would start a
	// Job twice or call ours unexpected.
	cj, err := c.client.BatchV1().CronJobs(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	jobs, err := c.ownedJobs(cj)
	if err != nil {
		return nil, err
	}
	changed := c.cleanup(ctx, cj, jobs)
	after, synced, syncErr := c.syncCronJob(ctx, cj, jobs)
	if changed || synced {
		if err := c.writeStatus(ctx, cj); err != nil {
			return nil, err
		}
	}
	if after != nil {
		return after, nil
	}
	return nil, syncErr
}

// writeStatus writes cj's status; on a conflict (another writer came
// between) it writes the same status onto the current object once more:
// the status is the controller's, and the Jobs it just created or deleted
// must not be forgotten.
func (c *controller) writeStatus(ctx context.Context, cj *batchv1.CronJob) error {
	_, err := c.client.BatchV1().CronJobs(cj.Namespace).UpdateStatus(ctx, cj, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		return err
	}
	cur, err := c.client.BatchV1().CronJobs(cj.Namespace).Get(ctx, cj.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if cur.UID != cj.UID {
		return nil // deleted and created again: the next sync starts over
	}
	cj.Status.DeepCopyInto(&cur.Status)
	_, err = c.client.BatchV1().CronJobs(cj.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
	return err
}

// ownedJobs returns the Jobs cj controls.
func (c *controller) ownedJobs(cj *batchv1.CronJob) ([]*batchv1.Job, error) {
	all, err := c.jobs.Jobs(cj.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var out []*batchv1.Job
	for _, j := range all {
		if ref := metav1.GetControllerOfNoCopy(j); ref != nil && ref.UID == cj.UID {
			out = append(out, j)
		}
	}
	return out, nil
}

// syncCronJob brings cj's status up to date with jobs and starts the Job
// of the most recent due time if the policy allows; it reports when to
// look again and whether the status changed.
func (c *controller) syncCronJob(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) (*time.Duration, bool, error) {
	now := c.clock.Now()
	changed, err := c.reconcileActive(ctx, cj, jobs)
	if err != nil {
		return nil, changed, err
	}
	if cj.DeletionTimestamp != nil {
		return nil, changed, nil
	}
	if tz := cj.Spec.TimeZone; tz != nil {
		if _, err := time.LoadLocation(*tz); err != nil {
			c.events.Eventf(cj, corev1.EventTypeWarning, "UnknownTimeZone", "invalid timeZone: %q: %s", *tz, err)
			return nil, changed, nil
		}
	}
	if cj.Spec.Suspend != nil && *cj.Spec.Suspend {
		return nil, changed, nil
	}
	if strings.Contains(cj.Spec.Schedule, "TZ") {
		c.events.Eventf(cj, corev1.EventTypeWarning, "UnsupportedSchedule",
			"CRON_TZ or TZ used in schedule %q is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details", cj.Spec.Schedule)
	}
	line := scheduleLine(cj)
	sched, err := parseSchedule(line)
	if err != nil {
		c.events.Eventf(cj, corev1.EventTypeWarning, "UnparseableSchedule", "unparseable schedule: %q : %s", cj.Spec.Schedule, err)
		return nil, changed, nil
	}
	m, err := mostRecent(cj, now, sched, true)
	if err != nil {
		c.events.Eventf(cj, corev1.EventTypeWarning, "InvalidSchedule", "invalid schedule: %s : %s", cj.Spec.Schedule, err)
		return nil, changed, nil
	}
	next := nextDelay(cj, now, sched)
	if m.recent == nil {
		return &next, changed, nil
	}
	if m.count > tooManyMissed {
		c.events.Eventf(cj, corev1.EventTypeWarning, "TooManyMissedTimes",
			"too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew")
	}
	t := *m.recent
	if d := cj.Spec.StartingDeadlineSeconds; d != nil && t.Add(time.Duration(*d)*time.Second).Before(now) {
		c.events.Eventf(cj, corev1.EventTypeWarning, "MissSchedule", "Missed scheduled time to start a job: %s", t.UTC().Format(time.RFC1123Z))
		return &next, changed, nil
	}
	if activeByName(cj, jobName(cj, t)) || cj.Status.LastScheduleTime.Equal(&metav1.Time{Time: t}) {
		return &next, changed, nil
	}
	switch cj.Spec.ConcurrencyPolicy {
	case batchv1.ForbidConcurrent:
		if len(cj.Status.Active) > 0 {
			c.events.Event(cj, corev1.EventTypeNormal, "JobAlreadyActive",
				"Not starting job because prior execution is running and concurrency policy is Forbid")
			return &next, changed, nil
		}
	case batchv1.ReplaceConcurrent:
		for _, ref := range cj.Status.Active {
			job, err := c.client.BatchV1().Jobs(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil {
				c.events.Eventf(cj, corev1.EventTypeWarning, "FailedGet", "Get job: %v", err)
				return nil, changed, err
			}
			if err := c.deleteJob(ctx, cj, job); err != nil {
				return nil, changed, fmt.Errorf("could not replace job %s/%s: %w", job.Namespace, job.Name, err)
			}
			changed = true
		}
	}
	created, err := c.startJob(ctx, cj, t)
	if err != nil || created == nil {
		return nil, changed, err
	}
	cj.Status.Active = append(cj.Status.Active, reference(created))
	cj.Status.LastScheduleTime = &metav1.Time{Time: t}
	next = nextDelay(cj, now, sched)
	return &next, true, nil
}

// reconcileActive drops finished and vanished Jobs from status.active,
// moves lastSuccessfulTime forward, and warns of active Jobs it did not
// start.
func (c *controller) reconcileActive(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) (bool, error) {
	changed := false
	children := make(map[types.UID]bool, len(jobs))
	for _, j := range jobs {
		children[j.UID] = true
		active := inActive(cj, j.UID)
		done, cond := finished(j)
		switch {
		case !active && !done:
			fresh, err := c.client.BatchV1().CronJobs(cj.Namespace).Get(ctx, cj.Name, metav1.GetOptions{})
			if err != nil {
				return changed, err
			}
			if inActive(fresh, j.UID) { // our cache was behind our own status write
				*cj = *fresh
				continue
			}
			c.events.Eventf(cj, corev1.EventTypeWarning, "UnexpectedJob", "Saw a job that the controller did not create or forgot: %s", j.Name)
		case done:
			if active {
				removeActive(cj, j.UID)
				c.events.Eventf(cj, corev1.EventTypeNormal, "SawCompletedJob", "Saw completed job: %s, condition: %v", j.Name, cond)
				changed = true
			}
			if t := j.Status.CompletionTime; cond == batchv1.JobComplete && t != nil &&
				(cj.Status.LastSuccessfulTime == nil || t.After(cj.Status.LastSuccessfulTime.Time)) {
				cj.Status.LastSuccessfulTime = t.DeepCopy()
				changed = true
			}
		}
	}
	for _, ref := range append([]corev1.ObjectReference(nil), cj.Status.Active...) {
		if children[ref.UID] {
			continue
		}
		// Ask the API: the Job may be newer than our cache.
		_, err := c.client.BatchV1().Jobs(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			c.events.Eventf(cj, corev1.EventTypeNormal, "MissingJob", "Active job went missing: %v", ref.Name)
			removeActive(cj, ref.UID)
			changed = true
		case err != nil:
			return changed, err
		}
	}
	return changed, nil
}

// startJob creates the Job of time t; nil (and no error) when a Job of
// that name exists that cj does not control, or that is already active.
func (c *controller) startJob(ctx context.Context, cj *batchv1.CronJob, t time.Time) (*batchv1.Job, error) {
	req, err := jobFor(cj, t)
	if err != nil {
		return nil, err
	}
	job, err := c.client.BatchV1().Jobs(cj.Namespace).Create(ctx, req, metav1.CreateOptions{})
	switch {
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return nil, err
	case apierrors.IsAlreadyExists(err):
		// Created by an earlier sync whose status write was lost.
		if job, err = c.client.BatchV1().Jobs(cj.Namespace).Get(ctx, req.Name, metav1.GetOptions{}); err != nil {
			return nil, err
		}
		if !metav1.IsControlledBy(job, cj) || inActive(cj, job.UID) {
			return nil, nil
		}
		c.log.Info("job already exists", "cronjob", cj.Namespace+"/"+cj.Name, "job", job.Name)
		return job, nil
	case err != nil:
		c.events.Eventf(cj, corev1.EventTypeWarning, "FailedCreate", "Error creating job: %v", err)
		return nil, err
	}
	c.events.Eventf(cj, corev1.EventTypeNormal, "SuccessfulCreate", "Created job %v", job.Name)
	return job, nil
}

// deleteJob deletes job (its pods in the background) and forgets it.
func (c *controller) deleteJob(ctx context.Context, cj *batchv1.CronJob, job *batchv1.Job) error {
	bg := metav1.DeletePropagationBackground
	err := c.client.BatchV1().Jobs(job.Namespace).Delete(ctx, job.Name, metav1.DeleteOptions{PropagationPolicy: &bg,
		Preconditions: &metav1.Preconditions{UID: &job.UID}})
	if err != nil && !apierrors.IsNotFound(err) {
		c.events.Eventf(cj, corev1.EventTypeWarning, "FailedDelete", "Deleted job: %v", err)
		return err
	}
	removeActive(cj, job.UID)
	c.events.Eventf(cj, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted job %v", job.Name)
	return nil
}
