package controllers_test

import (
	"bytes"
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// queueNames are the work queues every term runs (workqueue_*{name}).
var queueNames = []string{"deployment-controller", "replicaset-controller", "job-controller", "default-scheduler",
	"node-lifecycle-controller", "namespace-controller", "endpoint-controller", "endpointslice-controller",
	"pvc-protection-controller", "pv-protection-controller", "service-account-controller", "root-ca-cert-publisher",
	"garbage_collector_attempt_to_delete", "garbage_collector_attempt_to_orphan"}

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
			if d := after.value(m, "name", name) - before.value(m, "name", name); d <= 0 {
				t.Errorf("%s{name=%q} went up by %v, want more", m, name, d)
			}
		}
	}
	for _, name := range queueNames {
		for _, m := range []string{"workqueue_depth", "workqueue_adds_total", "workqueue_retries_total",
			"workqueue_unfinished_work_seconds", "workqueue_longest_running_processor_seconds"} {
			if !after.has(m, "name", name) {
				t.Errorf("no %s{name=%q}", m, name)
			}
		}
	}
	sched := []string{"result", "scheduled", "profile", "default-scheduler"}
	for _, m := range []string{"scheduler_schedule_attempts_total", "scheduler_scheduling_attempt_duration_seconds_count"} {
		if d := after.value(m, sched...) - before.value(m, sched...); d < 3 {
			t.Errorf("%s%v went up by %v, want at least 3", m, sched, d)
		}
	}
	if err := after.want("litek8s_controller_leading", 1); err != nil {
		t.Error(err)
	}
	for _, ctrl := range []string{"shared-informers", "generic-garbage-collector"} {
		if err := after.want("litek8s_controller_resyncs_total", 0, "controller", ctrl); err != nil {
			t.Error(err)
		}
	}
	promtoolCheck(t, after.raw, "workqueue_", "scheduler_", "litek8s_controller_")
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
		membertest.Eventually(t, 10*time.Second, func() error { return scrapeMember(t, c, i).want("litek8s_controller_leading", v) })
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
		if err := s.want("workqueue_depth", 0, "name", name); err != nil {
			t.Error(err)
		}
	}
	transfer(other, l)
	leading(l, 1)
	// The service account controller goes through every namespace in each
	// term.
	membertest.Eventually(t, 10*time.Second, func() error {
		n := []string{"name", "service-account-controller"}
		if again, was := scrapeMember(t, c, l).value("workqueue_adds_total", n...), first.value("workqueue_adds_total", n...); again <= was {
			return fmt.Errorf("workqueue_adds_total%v: %v after leading again, %v before", n, again, was)
		}
		return nil
	})
}

// samples are a scrape's sample values by series (name and sorted labels).
type samples struct {
	m   map[string]float64
	raw []byte
}

// scrapeMember reads member i's GET /metrics with the admin token.
func scrapeMember(t *testing.T, c *membertest.Cluster, i int) samples {
	t.Helper()
	cs, err := kubernetes.NewForConfig(c.RESTConfig(i))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	s := samples{m: map[string]float64{}, raw: raw}
	for _, line := range strings.Split(string(raw), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest, _ := strings.Cut(line, " ")
		var labels []string
		if i := strings.IndexByte(line, '{'); i >= 0 {
			end := strings.LastIndexByte(line, '}')
			name, rest = line[:i], line[end+1:]
			for _, kv := range strings.Split(line[i+1:end], ",") {
				if k, v, ok := strings.Cut(kv, "="); ok {
					labels = append(labels, k, strings.Trim(v, `"`))
				}
			}
		}
		v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		s.m[seriesKey(name, labels...)] = v
	}
	return s
}

func seriesKey(name string, labels ...string) string {
	var kvs []string
	for i := 0; i+1 < len(labels); i += 2 {
		kvs = append(kvs, labels[i]+"="+strconv.Quote(labels[i+1]))
	}
	sort.Strings(kvs)
	return name + "{" + strings.Join(kvs, ",") + "}"
}

func (s samples) value(name string, labels ...string) float64 { return s.m[seriesKey(name, labels...)] }

func (s samples) has(name string, labels ...string) bool {
	_, ok := s.m[seriesKey(name, labels...)]
	return ok
}

func (s samples) want(name string, v float64, labels ...string) error {
	got, ok := s.m[seriesKey(name, labels...)]
	if !ok || got != v {
		return fmt.Errorf("%s = %v (present: %v), want %v", seriesKey(name, labels...), got, ok, v)
	}
	return nil
}

// promtoolCheck lints the metric families with the given prefixes with
// `promtool check metrics` (skipped when promtool is not installed).
func promtoolCheck(t *testing.T, raw []byte, prefixes ...string) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool not installed: metrics not linted")
		return
	}
	var ours bytes.Buffer
	for _, line := range strings.SplitAfter(string(raw), "\n") {
		name := strings.TrimPrefix(strings.TrimPrefix(line, "# HELP "), "# TYPE ")
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				ours.WriteString(line)
				break
			}
		}
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = &ours
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}
