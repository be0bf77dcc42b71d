package clients

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// informerSet is a SharedInformerFactory with default client-go settings
// (streaming watch-list) on one member, with ConfigMap and Pod handlers.
type informerSet struct {
	factory   informers.SharedInformerFactory
	cms, pods *eventLog
	rec       *requestLog
}

// startInformers starts ConfigMap and Pod informers for namespace ns on
// member i and waits until they and their handlers have synced.
func startInformers(t *testing.T, c *membertest.Cluster, i int, ns string) *informerSet {
	t.Helper()
	s := &informerSet{cms: newEventLog(), pods: newEventLog(), rec: &requestLog{}}
	cfg := c.RESTConfig(i)
	cfg.WrapTransport = s.rec.wrap
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.factory = informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	regCM, err := s.factory.Core().V1().ConfigMaps().Informer().AddEventHandler(s.cms.handler())
	if err != nil {
		t.Fatal(err)
	}
	regPod, err := s.factory.Core().V1().Pods().Informer().AddEventHandler(s.pods.handler())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.factory.Start(ctx.Done())
	t.Cleanup(func() {
		cancel()
		s.factory.Shutdown()
	})
	wctx, wcancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer wcancel()
	if !cache.WaitForCacheSync(wctx.Done(), regCM.HasSynced, regPod.HasSynced) {
		t.Fatalf("informers on member %d did not sync; requests: %v", i, s.rec.matching(""))
	}
	return s
}

// converged reports how the informers differ from what cs lists: both the
// informer caches and the handlers' accumulated state must hold exactly the
// listed objects at the listed resourceVersions.
func (s *informerSet) converged(ctx context.Context, cs kubernetes.Interface, ns string) error {
	cms, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, k := range []struct {
		what  string
		want  []string
		log   *eventLog
		store cache.Store
	}{
		{"configmaps", listed(cms.Items), s.cms, s.factory.Core().V1().ConfigMaps().Informer().GetStore()},
		{"pods", listed(pods.Items), s.pods, s.factory.Core().V1().Pods().Informer().GetStore()},
	} {
		if got := k.log.snapshot(); !slices.Equal(got, k.want) {
			return fmt.Errorf("%s: handlers hold %v, the cluster %v", k.what, got, k.want)
		}
		var cached []string
		for _, o := range k.store.List() {
			cached = append(cached, key(o.(runtime.Object))+"@"+rv(o.(runtime.Object)))
		}
		sort.Strings(cached)
		if !slices.Equal(cached, k.want) {
			return fmt.Errorf("%s: informer cache holds %v, the cluster %v", k.what, cached, k.want)
		}
	}
	return nil
}

func listed[T any, PT interface {
	*T
	runtime.Object
}](items []T) []string {
	out := make([]string, 0, len(items))
	for i := range items {
		o := PT(&items[i])
		out = append(out, key(o)+"@"+rv(o))
	}
	sort.Strings(out)
	return out
}

// waitNotification waits for a notification of type typ for key at
// resourceVersion rv ("" for any) among those recorded from index from.
func waitNotification(t *testing.T, l *eventLog, from int, typ, k, rv string) notification {
	t.Helper()
	var found notification
	membertest.Eventually(t, 15*time.Second, func() error {
		evs, _ := l.since(from)
		for _, n := range evs {
			if n.Type == typ && n.Key == k && (rv == "" || n.RV == rv) {
				found = n
				return nil
			}
		}
		return fmt.Errorf("no %s %s@%s among %v", typ, k, rv, evs)
	})
	return found
}

// others returns the indices of the members other than x.
func others(c *membertest.Cluster, x int) []int {
	var out []int
	for i := range c.N() {
		if i != x {
			out = append(out, i)
		}
	}
	return out
}

func testConfigMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}
}

// testPod is a pod no scheduler of the cluster takes (the tests count
// every change they make; the default scheduler would add its own).
func testPod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "informers"}},
		Spec: corev1.PodSpec{SchedulerName: "informer-test-scheduler",
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}
}

// seed creates n ConfigMaps pre-0… and one Pod pre-pod in ns through cs.
func seed(t *testing.T, cs kubernetes.Interface, ns string, n int) {
	t.Helper()
	ctx := t.Context()
	createNamespace(t, cs, ns)
	for i := range n {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, testConfigMap(fmt.Sprintf("pre-%d", i), map[string]string{"i": fmt.Sprint(i)}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, testPod("pre-pod"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// An informer factory on one member syncs through a streaming watch-list
// and its handlers see every add, update and delete made through the other
// members, in order.
func TestInformersSeeWritesThroughOtherMembers(t *testing.T) {
	c := membertest.StartCluster(t, 3)
	ctx := t.Context()
	x := c.Follower()
	o := others(c, x)
	ca, cb := c.Clientset(o[0]), c.Clientset(o[1])
	const ns = "informers"
	seed(t, ca, ns, 5)

	inf := startInformers(t, c, x, ns)
	if err := inf.converged(ctx, cb, ns); err != nil {
		t.Fatalf("after sync: %v", err)
	}
	evs, _ := inf.cms.since(0)
	for _, n := range evs {
		if n.Type != "ADD" || !n.Initial {
			t.Errorf("initial sync: %v (initial=%v), want ADDs from the initial list", n, n.Initial)
		}
	}
	for _, res := range []string{"/configmaps", "/pods"} {
		reqs := inf.rec.matching(res)
		if len(reqs) == 0 || !isWatchList(reqs[0]) || reqs[0].Status != 200 {
			t.Errorf("%s: first request %v, want a streaming watch-list (sendInitialEvents=true) answered 200", res, reqs)
		}
		for _, r := range reqs {
			if isList(r) {
				t.Errorf("%s: client-go fell back to LIST: %v (all: %v)", res, r, reqs)
			}
		}
	}

	// ConfigMaps: add through one member, update and delete through the other.
	mark, _ := inf.cms.since(0)
	from := len(mark)
	created, err := ca.CoreV1().ConfigMaps(ns).Create(ctx, testConfigMap("live", map[string]string{"a": "1"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitNotification(t, inf.cms, from, "ADD", ns+"/live", created.ResourceVersion)
	if got := inf.cms.get(ns + "/live").(*corev1.ConfigMap); got.Data["a"] != "1" || got.UID != created.UID {
		t.Errorf("ADD carries %v uid %s, want a=1 uid %s", got.Data, got.UID, created.UID)
	}
	pre0, err := cb.CoreV1().ConfigMaps(ns).Get(ctx, "pre-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pre0.Data["i"] = "changed"
	updated, err := cb.CoreV1().ConfigMaps(ns).Update(ctx, pre0, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitNotification(t, inf.cms, from, "UPDATE", ns+"/pre-0", updated.ResourceVersion)
	if got := inf.cms.get(ns + "/pre-0").(*corev1.ConfigMap); got.Data["i"] != "changed" {
		t.Errorf("UPDATE carries %v, want i=changed", got.Data)
	}
	if err := ca.CoreV1().ConfigMaps(ns).Delete(ctx, "pre-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := waitNotification(t, inf.cms, from, "DELETE", ns+"/pre-1", ""); n.Unknown {
		t.Errorf("DELETE of pre-1 came from a relist, want a watch event")
	}
	evs, _ = inf.cms.since(from)
	if want := []string{"ADD", "UPDATE", "DELETE"}; len(evs) != 3 || evs[0].Type != want[0] || evs[1].Type != want[1] || evs[2].Type != want[2] {
		t.Errorf("notifications %v, want exactly ADD live, UPDATE pre-0, DELETE pre-1", evs)
	}

	// Pods: the same through the other members the other way round.
	mark, _ = inf.pods.since(0)
	from = len(mark)
	pod, err := cb.CoreV1().Pods(ns).Create(ctx, testPod("live-pod"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitNotification(t, inf.pods, from, "ADD", ns+"/live-pod", pod.ResourceVersion)
	pod.Labels["tier"] = "web"
	pod, err = ca.CoreV1().Pods(ns).Update(ctx, pod, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitNotification(t, inf.pods, from, "UPDATE", ns+"/live-pod", pod.ResourceVersion)
	if got := inf.pods.get(ns + "/live-pod").(*corev1.Pod); got.Labels["tier"] != "web" {
		t.Errorf("pod UPDATE carries labels %v, want tier=web", got.Labels)
	}
	if err := cb.CoreV1().Pods(ns).Delete(ctx, "live-pod", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNotification(t, inf.pods, from, "DELETE", ns+"/live-pod", "")

	membertest.Eventually(t, 10*time.Second, func() error { return inf.converged(ctx, ca, ns) })
	for _, l := range []*eventLog{inf.cms, inf.pods} {
		if v := l.violations(); v != "" {
			t.Errorf("handler contract: %s", v)
		}
	}
	c.SameObjects(ctx, "/api/v1/configmaps", "/api/v1/pods")
}

// The member an informer talks to is stopped while the others take writes,
// then restarted on the same address: the informer reconnects to it
// (resuming its watch, or relisting after 410) and converges to the
// cluster's state, with handlers told of every change.
func TestInformerSurvivesMemberRestart(t *testing.T) {
	for _, tc := range []struct {
		name   string
		leader bool // the informer's member leads when it is stopped
		feed   int  // change-feed window; small makes the resumed watch 410
	}{
		{name: "follower"},
		{name: "leader", leader: true},
		{name: "follower-feed-expired", feed: 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []membertest.Option
			if tc.feed > 0 {
				opts = append(opts, func(cfg *member.Config) { cfg.Store.FeedSize = tc.feed })
			}
			c := membertest.StartCluster(t, 3, opts...)
			ctx := t.Context()
			x := c.Follower()
			if tc.leader {
				x = c.WaitLeader()
			}
			o := others(c, x)
			ca, cb := c.Clientset(o[0]), c.Clientset(o[1])
			const ns = "restart"
			seed(t, ca, ns, 5)
			inf := startInformers(t, c, x, ns)
			if err := inf.converged(ctx, cb, ns); err != nil {
				t.Fatalf("after sync: %v", err)
			}

			c.Stop(x)
			stopped := time.Now()
			for i := range 2 * max(tc.feed, 6) {
				cs := []kubernetes.Interface{ca, cb}[i%2]
				name := fmt.Sprintf("down-%d", i)
				retryWrite(t, "create "+name, func(ctx context.Context) error {
					_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, testConfigMap(name, map[string]string{"i": name}), metav1.CreateOptions{})
					return err
				})
			}
			retryWrite(t, "update pre-0", func(ctx context.Context) error {
				cm, err := cb.CoreV1().ConfigMaps(ns).Get(ctx, "pre-0", metav1.GetOptions{})
				if err != nil {
					return err
				}
				cm.Data["i"] = "changed while down"
				_, err = cb.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
				return err
			})
			for _, name := range []string{"pre-1", "pre-2"} {
				retryWrite(t, "delete "+name, func(ctx context.Context) error {
					return ca.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{})
				})
			}
			retryWrite(t, "delete pre-pod", func(ctx context.Context) error {
				return cb.CoreV1().Pods(ns).Delete(ctx, "pre-pod", metav1.DeleteOptions{})
			})
			retryWrite(t, "create down-pod", func(ctx context.Context) error {
				_, err := ca.CoreV1().Pods(ns).Create(ctx, testPod("down-pod"), metav1.CreateOptions{})
				return err
			})

			c.Restart(x)
			restarted := time.Now()
			membertest.Eventually(t, 60*time.Second, func() error { return inf.converged(ctx, cb, ns) })
			t.Logf("converged %v after the restart (member down %v)", time.Since(restarted).Round(time.Millisecond),
				restarted.Sub(stopped).Round(time.Millisecond))
			if got := inf.cms.get(ns + "/pre-0").(*corev1.ConfigMap); got.Data["i"] != "changed while down" {
				t.Errorf("pre-0 in the handlers' state: %v", got.Data)
			}

			// Live again: a write through another member reaches the handlers.
			mark, _ := inf.cms.since(0)
			after, err := cb.CoreV1().ConfigMaps(ns).Create(ctx, testConfigMap("after", nil), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			waitNotification(t, inf.cms, len(mark), "ADD", ns+"/after", after.ResourceVersion)

			var since []string
			relisted := false
			for _, r := range inf.rec.matching("/configmaps") {
				if r.At.After(stopped) {
					since = append(since, r.String())
				}
				if r.At.After(restarted) && isWatchList(r) && r.Status == 200 {
					relisted = true
				}
			}
			t.Logf("configmap requests from the stop on:\n%s", strings.Join(since, "\n"))
			if tc.feed > 0 && !relisted {
				t.Errorf("the change feed no longer holds the informer's revision, yet it did not relist (watch-list) after the restart")
			}
			for _, l := range []*eventLog{inf.cms, inf.pods} {
				if v := l.violations(); v != "" {
					t.Errorf("handler contract: %s", v)
				}
			}
			c.SameObjects(ctx, "/api/v1/configmaps", "/api/v1/pods")
		})
	}
}
