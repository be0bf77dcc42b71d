package cronjob

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
)

// nextScheduleDelta pads a requeue past the schedule time, as kube does,
// so that a slightly early wake-up still finds the time due.
const nextScheduleDelta = 100 * time.Millisecond

// tooManyMissed is kube's bound beyond which missed times are reported.
const tooManyMissed = 100

// errZeroInterval: a schedule that parses but names (almost) no times,
// such as February 31st.
var errZeroInterval = errors.New("time difference between two schedules is less than 1 second")

// scheduleLine is the cron line the controller parses: spec.schedule,
// prefixed with "TZ=<spec.timeZone>" when the time zone is set and
// known and the schedule does not name a zone itself.
func scheduleLine(cj *batchv1.CronJob) string {
	if strings.Contains(cj.Spec.Schedule, "TZ") || cj.Spec.TimeZone == nil {
		return cj.Spec.Schedule
	}
	if _, err := time.LoadLocation(*cj.Spec.TimeZone); err != nil {
		return cj.Spec.Schedule
	}
	return fmt.Sprintf("TZ=%s %s", *cj.Spec.TimeZone, cj.Spec.Schedule)
}

// parseSchedule parses a standard cron line (with an optional TZ= or
// CRON_TZ= prefix); the cron library panics on some malformed lines,
// which become errors.
func parseSchedule(line string) (s cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("invalid schedule format: %v", r)
		}
	}()
	return cron.ParseStandard(line)
}

// missed is what mostRecent found between the earliest time it considers
// and now.
type missed struct {
	// earliest is lastScheduleTime, or the creation time, or (with the
	// deadline) now minus startingDeadlineSeconds, whichever is latest.
	earliest time.Time
	// recent is the most recent schedule time not after now (nil: none).
	recent *time.Time
	// count approximates how many schedule times were missed.
	count int64
}

// mostRecent finds the most recent schedule time of cj not after now,
// counting from its last schedule time (or creation); withDeadline
// ignores times older than startingDeadlineSeconds. A schedule whose
// times are (almost) never is errZeroInterval.
func mostRecent(cj *batchv1.CronJob, now time.Time, sched cron.Schedule, withDeadline bool) (missed, error) {
	m := missed{earliest: cj.CreationTimestamp.Time}
	if cj.Status.LastScheduleTime != nil {
		m.earliest = cj.Status.LastScheduleTime.Time
	}
	if d := cj.Spec.StartingDeadlineSeconds; withDeadline && d != nil {
		if limit := now.Add(-time.Duration(*d) * time.Second); limit.After(m.earliest) {
			m.earliest = limit
		}
	}
	t1 := sched.Next(m.earliest)
	if now.Before(t1) {
		return m, nil
	}
	t2 := sched.Next(t1)
	if now.Before(t2) {
		m.recent, m.count = &t1, 1
		return m, nil
	}
	interval := int64(t2.Sub(t1).Round(time.Second).Seconds())
	if interval < 1 {
		return m, errZeroInterval
	}
	// Estimate the count from the first interval (cron intervals vary),
	// then walk the last few times from a little before the estimate.
	m.count = int64(now.Sub(t1).Seconds())/interval + 1
	var last time.Time
	from := t1.Add(time.Duration((m.count-2)*interval) * time.Second)
	for t := sched.Next(from); !t.After(now); t = sched.Next(t) {
		last = t
	}
	if !last.IsZero() {
		m.recent = &last
	}
	return m, nil
}

// nextDelay is how long to wait before syncing cj again: until its next
// schedule time after the most recent one (or after now when times were
// missed), plus nextScheduleDelta.
func nextDelay(cj *batchv1.CronJob, now time.Time, sched cron.Schedule) time.Duration {
	m, err := mostRecent(cj, now, sched, false)
	from := now
	switch {
	case err != nil:
	case m.recent != nil:
		from = *m.recent
	case m.count == 0:
		from = m.earliest
	}
	return sched.Next(from).Add(nextScheduleDelta).Sub(now)
}

// jobName is the name of cj's Job for the time t: deterministic, so that
// the same time never makes two Jobs.
func jobName(cj *batchv1.CronJob, t time.Time) string {
	return fmt.Sprintf("%s-%d", cj.Name, t.Unix()/60)
}
