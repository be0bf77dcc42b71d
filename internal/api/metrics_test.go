package api_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1apply "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// TestMetrics drives a 3-member cluster with client-go and reads each
// member's GET /metrics (admin token): every request is counted once,
// under kube-apiserver's verb, scope and code; a write through a follower
// is counted there as forwarded (and again on the leader, which answers
// it); an open watch is a long-running request until it ends.
func TestMetrics(t *testing.T) {
	c := membertest.StartCluster(t, 3)
	l, f := c.WaitLeader(), c.Follower()
	cs, fcs := c.Clientset(l), c.Clientset(f)
	ctx := t.Context()
	const ns = "metrics"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The root CA publisher writes kube-root-ca.crt through the leader's
	// API: wait for it before counting.
	membertest.Eventually(t, 10*time.Second, func() error {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err
	})

	before, fBefore := scrape(t, c, l), scrape(t, c, f)
	cm := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "metrics"}},
			Data: map[string]string{"k": "v"}}
	}
	for _, n := range []string{"a", "b"} {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm(n), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fcs.CoreV1().ConfigMaps(ns).Create(ctx, cm("via-follower"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "a", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "missing", metav1.GetOptions{}); err == nil {
		t.Fatal("get of a missing ConfigMap succeeded")
	}
	var list *corev1.ConfigMapList
	for range 3 {
		var err error
		if list, err = cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, "a", types.MergePatchType, []byte(`{"data":{"k":"w"}}`),
		metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Apply(ctx, corev1apply.ConfigMap("b", ns).WithData(map[string]string{"k": "x"}),
		metav1.ApplyOptions{FieldManager: "metrics-test", Force: true}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces", ns, "status").DoRaw(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces", ns, "configmaps/b/nonsense").DoRaw(ctx); err == nil {
		t.Fatal("an unknown subresource was served")
	}
	if _, err := cs.CoreV1().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.Discovery().ServerVersion(); err != nil {
		t.Fatal(err)
	}

	// A watch is long-running while open: it shows in
	// apiserver_longrunning_requests, not in the in-flight gauge.
	wctx, stop := context.WithCancel(ctx)
	w, err := cs.CoreV1().ConfigMaps(ns).Watch(wctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	watchLabels := []string{"verb", "WATCH", "group", "", "version", "v1", "resource", "configmaps", "scope", "namespace"}
	membertest.Eventually(t, 10*time.Second, func() error {
		return scrape(t, c, l).Want("apiserver_longrunning_requests", 1, watchLabels...)
	})
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm("watched"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for ev := range w.ResultChan() {
		if o, ok := ev.Object.(*corev1.ConfigMap); ok && o.Name == "watched" {
			break
		}
	}
	w.Stop()
	stop()
	membertest.Eventually(t, 10*time.Second, func() error {
		return scrape(t, c, l).Want("apiserver_longrunning_requests", 0, watchLabels...)
	})
	if err := cs.CoreV1().ConfigMaps(ns).DeleteCollection(ctx, metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: "app=metrics"}); err != nil {
		t.Fatal(err)
	}

	after, fAfter := scrape(t, c, l), scrape(t, c, f)
	req := func(verb, resource, sub, scope, code string) []string {
		return []string{"verb", verb, "group", "", "version", "v1", "resource", resource, "subresource", sub,
			"scope", scope, "code", code}
	}
	for _, tc := range []struct {
		name   string
		s, ref samples
		metric string
		delta  float64
		labels []string
	}{
		// Two creates, the follower's forwarded one and the watched one.
		{"creates", after, before, "apiserver_request_total", 4, req("CREATE", "configmaps", "", "resource", "201")},
		{"get", after, before, "apiserver_request_total", 1, req("GET", "configmaps", "", "resource", "200")},
		{"get missing", after, before, "apiserver_request_total", 1, req("GET", "configmaps", "", "resource", "404")},
		{"lists", after, before, "apiserver_request_total", 3, req("LIST", "configmaps", "", "namespace", "200")},
		{"list all namespaces", after, before, "apiserver_request_total", 1, req("LIST", "configmaps", "", "cluster", "200")},
		{"patch", after, before, "apiserver_request_total", 1, req("PATCH", "configmaps", "", "resource", "200")},
		{"apply", after, before, "apiserver_request_total", 1, req("APPLY", "configmaps", "", "resource", "200")},
		{"delete", after, before, "apiserver_request_total", 1, req("DELETE", "configmaps", "", "resource", "200")},
		{"deletecollection", after, before, "apiserver_request_total", 1, req("DELETECOLLECTION", "configmaps", "", "namespace", "200")},
		{"watch", after, before, "apiserver_request_total", 1, req("WATCH", "configmaps", "", "namespace", "200")},
		{"status", after, before, "apiserver_request_total", 1, req("GET", "namespaces", "status", "resource", "200")},
		{"unknown subresource", after, before, "apiserver_request_total", 1,
			[]string{"verb", "GET", "group", "", "version", "", "resource", "", "subresource", "", "scope", "", "code", "404"}},
		{"readyz", after, before, "apiserver_request_total", 1,
			[]string{"verb", "GET", "group", "", "version", "", "resource", "", "subresource", "/readyz", "scope", "", "code", "200"}},
		{"version", after, before, "apiserver_request_total", 1,
			[]string{"verb", "GET", "group", "", "version", "", "resource", "", "subresource", "/version", "scope", "", "code", "200"}},
		{"list latency", after, before, "apiserver_request_duration_seconds_count", 3,
			[]string{"verb", "LIST", "group", "", "version", "v1", "resource", "configmaps", "subresource", "", "scope", "namespace"}},
		{"watch latency", after, before, "apiserver_request_duration_seconds_count", 1,
			[]string{"verb", "WATCH", "group", "", "version", "v1", "resource", "configmaps", "subresource", "", "scope", "namespace"}},
		// From the lists' revision: the patch, the apply, the delete, the
		// watched create.
		{"watch events", after, before, "apiserver_watch_events_total", 4,
			[]string{"group", "", "version", "v1", "resource", "configmaps"}},
		{"nothing forwarded by the leader", after, before, "litek8s_api_forwarded_requests_total", 0, []string{"code", "201"}},
		{"forwarded by the follower", fAfter, fBefore, "litek8s_api_forwarded_requests_total", 1, []string{"code", "201"}},
		{"answered by the follower", fAfter, fBefore, "apiserver_request_total", 1, req("CREATE", "configmaps", "", "resource", "201")},
		{"not a list on the follower", fAfter, fBefore, "apiserver_request_total", 0, req("LIST", "configmaps", "", "namespace", "200")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.s.Value(tc.metric, tc.labels...) - tc.ref.Value(tc.metric, tc.labels...); got != tc.delta {
				t.Errorf("%s%v went up by %v, want %v", tc.metric, tc.labels, got, tc.delta)
			}
		})
	}
	for _, kind := range []string{"readOnly", "mutating"} {
		if ok := after.Has("apiserver_current_inflight_requests", "request_kind", kind); !ok {
			t.Errorf("no apiserver_current_inflight_requests{request_kind=%q}", kind)
		}
	}
	// Objects are counted from the store at scrape time.
	membertest.Eventually(t, 10*time.Second, func() error {
		all, err := cs.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		return scrape(t, c, l).Want("apiserver_storage_objects", float64(len(all.Items)), "resource", "configmaps")
	})
	if got := after.Value("apiserver_storage_objects", "resource", "deployments.apps"); got != 0 {
		t.Errorf("apiserver_storage_objects{resource=deployments.apps} = %v, want 0", got)
	}
	membertest.PromtoolCheck(t, after.Raw, "apiserver_", "litek8s_api_")
}

// samples are a scrape of a member's /metrics (membertest.Metrics).
type samples = membertest.Metrics

func scrape(t *testing.T, c *membertest.Cluster, i int) samples { return c.Scrape(t, i) }
