// Package cronjob is litek8s's CronJob controller (kube's "cronjob"
// controller, v2): at each time spec.schedule (a standard five-field cron
// line, in spec.timeZone or UTC) names, it creates a Job from
// spec.jobTemplate called "<cronjob>-<scheduled time in minutes since the
// epoch>", controlled by the CronJob and annotated with
// batch.kubernetes.io/cronjob-scheduled-timestamp.
//
// Only the most recent missed time since status.lastScheduleTime (or the
// CronJob's creation) runs; more than 100 missed times also give kube's
// TooManyMissedTimes warning. A time older than startingDeadlineSeconds
// is missed (MissSchedule). spec.suspend stops new Jobs;
// concurrencyPolicy Forbid skips a time while a Job is active and Replace
// deletes the active Jobs (background propagation) first.
// status.active, lastScheduleTime and lastSuccessfulTime follow the
// CronJob's Jobs, and finished Jobs beyond successfulJobsHistoryLimit and
// failedJobsHistoryLimit are deleted, oldest (by start time) first. The
// events are kube's (SuccessfulCreate, SawCompletedJob, SuccessfulDelete,
// MissingJob, UnexpectedJob, JobAlreadyActive, MissSchedule,
// UnknownTimeZone, UnparseableSchedule, ...).
//
// A CronJob is queued again for its next time on a delaying queue
// measured on Config.Clock (tests pass a fast clock); a change to one of
// its Jobs queues it at once. A sync reads the CronJob from the API
// rather than the informer, whose copy may not hold the controller's last
// status write yet (kube reads its cache and sometimes warns of its own
// Jobs as unexpected).
//
// Concurrency: New registers informer handlers; Run runs Config.Workers
// workers until the term ends, then shuts the queue down and waits for
// them. A CronJob is synced by one worker at a time (the work queue's
// guarantee).
package cronjob
