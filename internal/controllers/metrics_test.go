package controllers_test

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// queueNames are the work queues every term runs (workqueue_*{name}).
var queueNames = []string{"deployment-controller", "replicaset-controller", "job-controller", "statefulset-controller", "daemonset-controller",
	"default-scheduler",
	"node-lifecycle-controller", "namespace-controller", "endpoint-controller", "endpointslice-controller",
	"pvc-protection-controller", "pv-protection-controller", "service-account-controller", "root-ca-cert-publisher",
	"garbage_collector_attempt_to_delete", "garbage_collector_attempt_to_orphan", "persistentvolume-binder", "disruption", "resourcequota-controller",
	"ClusterRoleAggregator"}

// TestControllerMetrics scales a Deployment on one member with simulated
// nodes and reads its GET /metrics: the controllers' queues and the
// scheduler's attempts moved.
func TestControllerMetrics(t *testing.T) {
	c := membertest.StartCluster(t, 1, func(cfg *member.Config) { cfg.Controllers.Scheduling.SimNodes.Count = 2 })
	f := newFixtureOn(t, c, 0)
	ns := f.namespace(t, "metrics")
	before := scrapeMember(t, c, 0)
	one := int32(1)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{Replicas: &one,
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, Template: podTemplate("web")}}
	if _, err := f.cs.AppsV1().Deployments(ns).Create(t.Context(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.cs.AppsV1().Deployments(ns).Patch(t.Context(), "web", types.MergePatchType,
		[]byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	membertest.Eventually(t, 30*time.Second, func() error {
		l, err := f.cs.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return err
		}
		bound := 0
		for _, p := range l.Items {
			if p.Spec.NodeName != "" {
				bound++
			}
		}
		if bound < 3 {
			return fmt.Errorf("%d of %d pods bound, want 3", bound, len(l.Items))
		}
		return nil
	})
	after := scrapeMember(t, c, 0)
	for _, name := range []string{"deployment-controller", "replicaset-controller", "default-scheduler"} {
		for _, m := range []string{"workqueue_adds_total", "workqueue_queue_duration_seconds_count", "workqueue_work_duration_seconds_count"} {
			if d := after.Value(m, "name", name) - before.Value(m, "name", name); d <= 0 {
				t.Errorf("%s{name=%q} went up by %v, want more", m, name, d)
			}
		}
	}
	for _, name := range queueNames {
		for _, m := range []string{"workqueue_depth", "workqueue_adds_total", "workqueue_retries_total",
			"workqueue_unfinished_work_seconds", "workqueue_longest_running_processor_seconds"} {
			if !after.Has(m, "name", name) {
				t.Errorf("no %s{name=%q}", m, name)
			}
		}
	}
	sched := []string{"result", "scheduled", "profile", "default-scheduler"}
	for _, m := range []string{"scheduler_schedule_attempts_total", "scheduler_scheduling_attempt_duration_seconds_count"} {
		if d := after.Value(m, sched...) - before.Value(m, sched...); d < 3 {
			t.Errorf("%s%v went up by %v, want at least 3", m, sched, d)
		}
	}
	if err := after.Want("litek8s_controller_leading", 1); err != nil {
		t.Error(err)
	}
	for _, ctrl := range []string{"shared-informers", "generic-garbage-collector"} {
		if err := after.Want("litek8s_controller_resyncs_total", 0, "controller", ctrl); err != nil {
			t.Error(err)
		}
	}
	membertest.PromtoolCheck(t, after.Raw, "workqueue_", "scheduler_", "litek8s_controller_")
}

// TestControllerMetricsAcrossTerms: a member that leads again runs new
// queues under the same series (nothing registered twice); one that no
// longer leads says so and shows no queued work.
func TestControllerMetricsAcrossTerms(t *testing.T) {
	c := membertest.StartCluster(t, 3)
	l := c.WaitLeader()
	other := (l + 1) % 3
	leading := func(i int, v float64) {
		t.Helper()
		membertest.Eventually(t, 10*time.Second, func() error { return scrapeMember(t, c, i).Want("litek8s_controller_leading", v) })
	}
	leading(l, 1)
	leading(other, 0)
	first := scrapeMember(t, c, l)
	transfer := func(from, to int) {
		t.Helper()
		if _, err := c.Member(from).Store().TransferLeadership(t.Context(), fmt.Sprintf("m%d", to)); err != nil {
			t.Fatal(err)
		}
	}
	transfer(l, other)
	leading(l, 0)
	leading(other, 1)
	s := scrapeMember(t, c, l)
	for _, name := range queueNames {
		if err := s.Want("workqueue_depth", 0, "name", name); err != nil {
			t.Error(err)
		}
	}
	transfer(other, l)
	leading(l, 1)
	// The service account controller goes through every namespace in each
	// term.
	membertest.Eventually(t, 10*time.Second, func() error {
		n := []string{"name", "service-account-controller"}
		if again, was := scrapeMember(t, c, l).Value("workqueue_adds_total", n...), first.Value("workqueue_adds_total", n...); again <= was {
			return fmt.Errorf("workqueue_adds_total%v: %v after leading again, %v before", n, again, was)
		}
		return nil
	})
}

// samples are a scrape of a member's /metrics (membertest.Metrics).
type samples = membertest.Metrics

func scrapeMember(t *testing.T, c *membertest.Cluster, i int) samples { return c.Scrape(t, i) }
