package cronjob

import (
	"errors"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func cronJob(schedule, created string, last *string, deadline *int64, tz *string) *batchv1.CronJob {
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: "ns"},
		Spec: batchv1.CronJobSpec{Schedule: schedule, StartingDeadlineSeconds: deadline, TimeZone: tz}}
	c, _ := time.Parse(time.RFC3339, created)
	cj.CreationTimestamp = metav1.NewTime(c)
	if last != nil {
		l, _ := time.Parse(time.RFC3339, *last)
		cj.Status.LastScheduleTime = &metav1.Time{Time: l}
	}
	return cj
}

func ptr[T any](v T) *T { return &v }

func TestMostRecent(t *testing.T) {
	for _, tc := range []struct {
		name, schedule, created string
		last                    *string
		deadline                *int64
		tz                      *string
		now                     string
		withDeadline            bool
		want                    string // "" for none
		count                   int64
		err                     error
	}{
		{name: "nothing due yet", schedule: "*/5 * * * *", created: "2026-01-01T10:01:00Z", now: "2026-01-01T10:04:59Z"},
		{name: "one due", schedule: "*/5 * * * *", created: "2026-01-01T10:01:00Z", now: "2026-01-01T10:05:30Z",
			want: "2026-01-01T10:05:00Z", count: 1},
		{name: "three missed, the latest runs", schedule: "*/5 * * * *", created: "2026-01-01T10:01:00Z", now: "2026-01-01T10:17:00Z",
			want: "2026-01-01T10:15:00Z", count: 3},
		{name: "from the last schedule time", schedule: "0 * * * *", created: "2026-01-01T00:00:00Z", last: ptr("2026-01-01T09:00:00Z"),
			now: "2026-01-01T10:30:00Z", want: "2026-01-01T10:00:00Z", count: 1},
		{name: "more than 100 missed", schedule: "*/1 * * * ?", created: "2025-09-24T00:00:00Z", last: ptr("2025-09-25T00:00:00Z"),
			now: "2026-01-01T00:00:30Z", want: "2026-01-01T00:00:00Z", count: 141120},
		{name: "deadline hides old times", schedule: "0 * * * *", created: "2026-01-01T00:00:00Z", deadline: ptr[int64](600),
			now: "2026-01-01T10:30:00Z", withDeadline: true},
		{name: "deadline keeps recent times", schedule: "*/10 * * * *", created: "2026-01-01T00:00:00Z", deadline: ptr[int64](600),
			now: "2026-01-01T10:35:00Z", withDeadline: true, want: "2026-01-01T10:30:00Z", count: 1},
		{name: "deadline ignored for requeue math", schedule: "0 * * * *", created: "2026-01-01T00:00:00Z", deadline: ptr[int64](600),
			now: "2026-01-01T10:30:00Z", want: "2026-01-01T10:00:00Z", count: 10},
		{name: "time zone", schedule: "0 9 * * *", tz: ptr("Asia/Tokyo"), created: "2026-01-01T00:30:00Z",
			now: "2026-01-02T00:10:00Z", want: "2026-01-02T00:00:00Z", count: 1},
		{name: "CRON_TZ in the schedule", schedule: "CRON_TZ=America/New_York 0 9 * * *", created: "2026-01-01T00:00:00Z",
			now: "2026-01-01T14:30:00Z", want: "2026-01-01T14:00:00Z", count: 1},
		{name: "February 31st", schedule: "59 23 31 2 *", created: "2026-01-01T00:00:00Z", now: "2026-06-01T00:00:00Z", err: errZeroInterval},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cj := cronJob(tc.schedule, tc.created, tc.last, tc.deadline, tc.tz)
			sched, err := parseSchedule(scheduleLine(cj))
			if err != nil {
				t.Fatal(err)
			}
			m, err := mostRecent(cj, mustTime(t, tc.now), sched, tc.withDeadline)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			got := ""
			if m.recent != nil {
				got = m.recent.UTC().Format(time.RFC3339)
			}
			if got != tc.want || m.count != tc.count {
				t.Errorf("most recent %q (%d missed), want %q (%d)", got, m.count, tc.want, tc.count)
			}
		})
	}
}

func TestNextDelay(t *testing.T) {
	for _, tc := range []struct {
		name, schedule, created string
		last                    *string
		now                     string
		want                    time.Duration
	}{
		{name: "before the first time", schedule: "*/5 * * * *", created: "2026-01-01T10:01:00Z", now: "2026-01-01T10:02:00Z",
			want: 3*time.Minute + nextScheduleDelta},
		{name: "just scheduled", schedule: "*/5 * * * *", created: "2026-01-01T10:01:00Z", last: ptr("2026-01-01T10:05:00Z"),
			now: "2026-01-01T10:05:01Z", want: 4*time.Minute + 59*time.Second + nextScheduleDelta},
		{name: "missed times: the one after now", schedule: "0 * * * *", created: "2026-01-01T00:00:00Z",
			now: "2026-01-01T10:30:00Z", want: 30*time.Minute + nextScheduleDelta},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cj := cronJob(tc.schedule, tc.created, tc.last, nil, nil)
			sched, err := parseSchedule(scheduleLine(cj))
			if err != nil {
				t.Fatal(err)
			}
			if got := nextDelay(cj, mustTime(t, tc.now), sched); got != tc.want {
				t.Errorf("next delay %v, want %v", got, tc.want)
			}
		})
	}
}

func TestScheduleLine(t *testing.T) {
	for _, tc := range []struct {
		schedule string
		tz       *string
		want     string
	}{
		{"*/1 * * * *", nil, "*/1 * * * *"},
		{"*/1 * * * *", ptr("Europe/Paris"), "TZ=Europe/Paris */1 * * * *"},
		{"*/1 * * * *", ptr("Mars/Olympus"), "*/1 * * * *"}, // unknown: the sync reports it
		{"TZ=UTC */1 * * * *", ptr("Europe/Paris"), "TZ=UTC */1 * * * *"},
	} {
		cj := cronJob(tc.schedule, "2026-01-01T00:00:00Z", nil, nil, tc.tz)
		if got := scheduleLine(cj); got != tc.want {
			t.Errorf("scheduleLine(%q, %v) = %q, want %q", tc.schedule, tc.tz, got, tc.want)
		}
	}
	if _, err := parseSchedule("61 * * * *"); err == nil {
		t.Error("minute 61 parsed")
	}
	if _, err := parseSchedule("TZ=Mars/Olympus * * * * *"); err == nil {
		t.Error("unknown zone parsed")
	}
}

func TestJobFor(t *testing.T) {
	cj := cronJob("0 9 * * *", "2026-01-01T00:00:00Z", nil, nil, ptr("Asia/Tokyo"))
	cj.UID = "u1"
	cj.Spec.JobTemplate.Labels = map[string]string{"app": "x"}
	cj.Spec.JobTemplate.Annotations = map[string]string{"a": "b"}
	cj.Spec.JobTemplate.Spec.BackoffLimit = ptr[int32](2)
	at := mustTime(t, "2026-01-02T00:00:00Z")
	job, err := jobFor(cj, at)
	if err != nil {
		t.Fatal(err)
	}
	if job.Name != "cj-29455200" || job.Labels["app"] != "x" || job.Annotations["a"] != "b" ||
		job.Annotations[batchv1.CronJobScheduledTimestampAnnotation] != "2026-01-02T09:00:00+09:00" ||
		*job.Spec.BackoffLimit != 2 {
		t.Errorf("job %s: labels %v, annotations %v, spec %+v", job.Name, job.Labels, job.Annotations, job.Spec)
	}
	if ref := metav1.GetControllerOf(job); ref == nil || ref.UID != "u1" || ref.Kind != "CronJob" || ref.APIVersion != "batch/v1" {
		t.Errorf("owner %+v", job.OwnerReferences)
	}
	if _, ok := cj.Spec.JobTemplate.Annotations[batchv1.CronJobScheduledTimestampAnnotation]; ok {
		t.Error("the template's annotations changed")
	}
}

func TestByStartTime(t *testing.T) {
	at := func(s string) *metav1.Time { v, _ := time.Parse(time.RFC3339, s); return &metav1.Time{Time: v} }
	jobs := []*batchv1.Job{
		{ObjectMeta: metav1.ObjectMeta{Name: "unstarted"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "late"}, Status: batchv1.JobStatus{StartTime: at("2026-01-01T00:03:00Z")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Status: batchv1.JobStatus{StartTime: at("2026-01-01T00:01:00Z")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Status: batchv1.JobStatus{StartTime: at("2026-01-01T00:01:00Z")}},
	}
	slices.SortFunc(jobs, byStartTime)
	var names []string
	for _, j := range jobs {
		names = append(names, j.Name)
	}
	if want := []string{"a", "b", "late", "unstarted"}; !slices.Equal(names, want) {
		t.Errorf("order %v, want %v", names, want)
	}
}
