package cronjob_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/controllers/workload/workloadtest"
	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// outcome: pods labelled outcome=succeed or outcome=fail finish so, the
// others run.
func outcome(p *corev1.Pod) corev1.PodPhase {
	switch p.Labels["outcome"] {
	case "succeed":
		return corev1.PodSucceeded
	case "fail":
		return corev1.PodFailed
	}
	return corev1.PodRunning
}

// The CronJob controller in a cluster of 3, driven through a follower
// with client-go, on a clock 60 times faster than real time: a schedule
// of every minute runs every second.
func TestCronJob(t *testing.T) {
	clk := fastClock{start: time.Now(), speed: 60}
	c := membertest.StartCluster(t, 3, func(cfg *member.Config) {
		cfg.Controllers.Workloads.CronJob.Clock = clk
	})
	cs := c.Clientset(c.Follower())
	ns := "cron"
	workloadtest.Namespace(t, cs, ns)
	workloadtest.StartKubelet(t, cs, ns, outcome)
	t.Run("allow", func(t *testing.T) { testAllow(t, cs, ns, clk) })
	t.Run("forbid", func(t *testing.T) { testForbid(t, cs, ns) })
	t.Run("replace", func(t *testing.T) { testReplace(t, cs, ns) })
	t.Run("suspend", func(t *testing.T) { testSuspend(t, cs, ns) })
	t.Run("history limits", func(t *testing.T) { testHistory(t, cs, ns) })
	t.Run("missing job", func(t *testing.T) { testMissing(t, cs, ns) })
	t.Run("invalid", func(t *testing.T) { testInvalid(t, cs, ns) })
	for _, name := range []string{"allow", "good", "bad"} {
		if seen := reasons(t, cs, ns, name); slices.Contains(seen, "UnexpectedJob") || slices.Contains(seen, "MissingJob") {
			t.Errorf("cronjob %s: events %v", name, seen)
		}
	}
	for _, cj := range list(t, cs, ns) {
		setSuspend(t, cs, ns, cj.Name, true)
	}
	time.Sleep(time.Second) // a sync in flight may still start one Job
	c.SameObjects(t.Context(), "/apis/batch/v1/cronjobs", "/apis/batch/v1/jobs")
}

func newCronJob(name string, policy batchv1.ConcurrencyPolicy, result string) *batchv1.CronJob {
	return &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: batchv1.CronJobSpec{
		Schedule: "*/1 * * * *", ConcurrencyPolicy: policy,
		JobTemplate: batchv1.JobTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"cron": name}},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"outcome": result}},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}}}
}

func create(t *testing.T, cs kubernetes.Interface, ns string, cj *batchv1.CronJob) *batchv1.CronJob {
	t.Helper()
	cj, err := cs.BatchV1().CronJobs(ns).Create(t.Context(), cj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cj
}

func list(t *testing.T, cs kubernetes.Interface, ns string) []batchv1.CronJob {
	t.Helper()
	l, err := cs.BatchV1().CronJobs(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func setSuspend(t *testing.T, cs kubernetes.Interface, ns, name string, on bool) {
	t.Helper()
	p := fmt.Appendf(nil, `{"spec":{"suspend":%t}}`, on)
	if _, err := cs.BatchV1().CronJobs(ns).Patch(t.Context(), name, types.MergePatchType, p, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// jobsOf returns the Jobs uid controls, by name.
func jobsOf(t *testing.T, cs kubernetes.Interface, ns string, uid types.UID) []batchv1.Job {
	t.Helper()
	l, err := cs.BatchV1().Jobs(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []batchv1.Job
	for _, j := range l.Items {
		if ref := metav1.GetControllerOf(&j); ref != nil && ref.UID == uid {
			out = append(out, j)
		}
	}
	return out
}

func names(jobs []batchv1.Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Name)
	}
	return out
}

// waitActive waits until name's status lists at least n active Jobs.
func waitActive(t *testing.T, cs kubernetes.Interface, ns, name string, n int) *batchv1.CronJob {
	t.Helper()
	var cj *batchv1.CronJob
	membertest.Eventually(t, 30*time.Second, func() (err error) {
		if cj, err = cs.BatchV1().CronJobs(ns).Get(t.Context(), name, metav1.GetOptions{}); err != nil {
			return err
		}
		if len(cj.Status.Active) < n {
			return fmt.Errorf("cronjob %s: %d active, want %d", name, len(cj.Status.Active), n)
		}
		return nil
	})
	return cj
}

// reasons returns the reasons of the controller's events about name.
func reasons(t *testing.T, cs kubernetes.Interface, ns, name string) []string {
	t.Helper()
	l, err := cs.CoreV1().Events(ns).List(t.Context(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range l.Items {
		if e.Source.Component == "cronjob-controller" {
			out = append(out, e.Reason)
		}
	}
	return out
}

// waitEvent waits for an event of reason about name.
func waitEvent(t *testing.T, cs kubernetes.Interface, ns, name, reason string) {
	t.Helper()
	membertest.Eventually(t, 30*time.Second, func() error {
		if seen := reasons(t, cs, ns, name); !slices.Contains(seen, reason) {
			return fmt.Errorf("no %s event for %s; saw %v", reason, name, seen)
		}
		return nil
	})
}

// waitReplaced waits until the CronJob name's one active Job is another
// than first and also (if not nil) holds.
func waitReplaced(t *testing.T, cs kubernetes.Interface, ns, name, first string, also func() error) {
	t.Helper()
	membertest.Eventually(t, 30*time.Second, func() error {
		got, err := cs.BatchV1().CronJobs(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(got.Status.Active) != 1 || got.Status.Active[0].Name == first {
			return fmt.Errorf("active %v", got.Status.Active)
		}
		if also != nil {
			return also()
		}
		return nil
	})
}

// testAllow: Jobs run side by side, each named after its minute,
// controlled by the CronJob, with the template's labels and the
// scheduled-timestamp annotation.
func testAllow(t *testing.T, cs kubernetes.Interface, ns string, clk fastClock) {
	cj := create(t, cs, ns, newCronJob("allow", batchv1.AllowConcurrent, "run"))
	got := waitActive(t, cs, ns, cj.Name, 2)
	if got.Status.LastScheduleTime == nil {
		t.Fatalf("status %+v", got.Status)
	}
	waitEvent(t, cs, ns, cj.Name, "SuccessfulCreate")
	for _, j := range jobsOf(t, cs, ns, cj.UID) {
		ts, err := time.Parse(time.RFC3339, j.Annotations[batchv1.CronJobScheduledTimestampAnnotation])
		if err != nil || j.Name != fmt.Sprintf("allow-%d", ts.Unix()/60) || ts.Second() != 0 || ts.After(clk.Now()) ||
			j.Labels["cron"] != "allow" {
			t.Errorf("job %s: labels %v, annotations %v (%v)", j.Name, j.Labels, j.Annotations, err)
		}
	}
	setSuspend(t, cs, ns, cj.Name, true)
}

// testForbid: while a Job runs, no other starts.
func testForbid(t *testing.T, cs kubernetes.Interface, ns string) {
	cj := create(t, cs, ns, newCronJob("forbid", batchv1.ForbidConcurrent, "run"))
	first := waitActive(t, cs, ns, cj.Name, 1).Status.Active[0].Name
	waitEvent(t, cs, ns, cj.Name, "JobAlreadyActive")
	time.Sleep(3 * time.Second) // three more schedule times
	got, err := cs.BatchV1().CronJobs(ns).Get(t.Context(), cj.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if jobs := jobsOf(t, cs, ns, cj.UID); len(jobs) != 1 || len(got.Status.Active) != 1 || got.Status.Active[0].Name != first {
		t.Errorf("jobs %v, active %v; want only %s", names(jobs), got.Status.Active, first)
	}
	setSuspend(t, cs, ns, cj.Name, true)
}

// testReplace: the next time deletes the running Job and starts another.
func testReplace(t *testing.T, cs kubernetes.Interface, ns string) {
	cj := create(t, cs, ns, newCronJob("replace", batchv1.ReplaceConcurrent, "run"))
	first := waitActive(t, cs, ns, cj.Name, 1).Status.Active[0].Name
	waitReplaced(t, cs, ns, cj.Name, first, func() error {
		_, err := cs.BatchV1().Jobs(ns).Get(t.Context(), first, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("job %s still there (%v)", first, err)
		}
		return nil
	})
	waitEvent(t, cs, ns, cj.Name, "SuccessfulDelete")
	setSuspend(t, cs, ns, cj.Name, true)
}

// testSuspend: a suspended CronJob starts nothing; resumed, it starts
// Jobs; suspended again, it stops.
func testSuspend(t *testing.T, cs kubernetes.Interface, ns string) {
	cj := newCronJob("suspend", batchv1.AllowConcurrent, "run")
	cj.Spec.Suspend = new(true)
	cj = create(t, cs, ns, cj)
	time.Sleep(3 * time.Second)
	if jobs := jobsOf(t, cs, ns, cj.UID); len(jobs) != 0 {
		t.Fatalf("suspended: jobs %v", names(jobs))
	}
	setSuspend(t, cs, ns, cj.Name, false)
	waitActive(t, cs, ns, cj.Name, 1)
	setSuspend(t, cs, ns, cj.Name, true)
	time.Sleep(time.Second) // a sync in flight may still start one
	before := names(jobsOf(t, cs, ns, cj.UID))
	time.Sleep(3 * time.Second)
	if after := names(jobsOf(t, cs, ns, cj.UID)); !slices.Equal(before, after) {
		t.Errorf("suspended again: jobs %v, then %v", before, after)
	}
}

// testHistory: only the newest successfulJobsHistoryLimit succeeded and
// failedJobsHistoryLimit failed Jobs are kept; lastSuccessfulTime
// follows the Jobs.
func testHistory(t *testing.T, cs kubernetes.Interface, ns string) {
	for _, tc := range []struct {
		name, result string
		cond         batchv1.JobConditionType
	}{{"good", "succeed", batchv1.JobComplete}, {"bad", "fail", batchv1.JobFailed}} {
		cj := newCronJob(tc.name, batchv1.AllowConcurrent, tc.result)
		one, zero := int32(1), int32(0)
		cj.Spec.SuccessfulJobsHistoryLimit, cj.Spec.FailedJobsHistoryLimit = &one, &one
		cj.Spec.JobTemplate.Spec.BackoffLimit = &zero
		cj = create(t, cs, ns, cj)
		waitEvent(t, cs, ns, cj.Name, "SawCompletedJob")
		waitEvent(t, cs, ns, cj.Name, "SuccessfulDelete")
		setSuspend(t, cs, ns, cj.Name, true)
		membertest.Eventually(t, 30*time.Second, func() error {
			got, err := cs.BatchV1().CronJobs(ns).Get(t.Context(), cj.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			jobs := jobsOf(t, cs, ns, cj.UID)
			done := 0
			for _, j := range jobs {
				for _, c := range j.Status.Conditions {
					if c.Type == tc.cond && c.Status == corev1.ConditionTrue {
						done++
					}
				}
			}
			if done != 1 || len(jobs) != 1 || len(got.Status.Active) != 0 {
				return fmt.Errorf("jobs %v (%d %s), active %v", names(jobs), done, tc.cond, got.Status.Active)
			}
			if (tc.cond == batchv1.JobComplete) != (got.Status.LastSuccessfulTime != nil) {
				return fmt.Errorf("lastSuccessfulTime %v", got.Status.LastSuccessfulTime)
			}
			return nil
		})
	}
}

// testMissing: an active Job deleted by someone else leaves status.active
// (MissingJob), and Forbid then starts the next one.
func testMissing(t *testing.T, cs kubernetes.Interface, ns string) {
	cj := create(t, cs, ns, newCronJob("missing", batchv1.ForbidConcurrent, "run"))
	first := waitActive(t, cs, ns, cj.Name, 1).Status.Active[0].Name
	if err := cs.BatchV1().Jobs(ns).Delete(t.Context(), first, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, cs, ns, cj.Name, "MissingJob")
	waitReplaced(t, cs, ns, cj.Name, first, nil)
	setSuspend(t, cs, ns, cj.Name, true)
}

// testInvalid: a bad schedule or time zone is a 422 and creates nothing.
func testInvalid(t *testing.T, cs kubernetes.Interface, ns string) {
	for _, mutate := range []func(*batchv1.CronJob){
		func(cj *batchv1.CronJob) { cj.Spec.Schedule = "61 * * * *" },
		func(cj *batchv1.CronJob) { cj.Spec.Schedule = "TZ=UTC" },
		func(cj *batchv1.CronJob) { cj.Spec.TimeZone = new("Mars/Olympus") },
	} {
		cj := newCronJob("invalid", batchv1.AllowConcurrent, "run")
		mutate(cj)
		_, err := cs.BatchV1().CronJobs(ns).Create(t.Context(), cj, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Errorf("schedule %q, time zone %v: %v, want Invalid", cj.Spec.Schedule, cj.Spec.TimeZone, err)
		}
	}
	if _, err := cs.BatchV1().CronJobs(ns).Get(t.Context(), "invalid", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get invalid: %v", err)
	}
}
