package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// Helpers of the cluster tests: clients of one member, objects with
// owners, waits, and a recorder of watch events in revision order.

// fixture is one cluster and its clients.
type fixture struct {
	c   *membertest.Cluster
	cs  kubernetes.Interface
	dyn dynamic.Interface
}

func newFixture(t *testing.T, c *membertest.Cluster) *fixture {
	t.Helper()
	return newFixtureOn(t, c, c.N()-1) // a follower, in a cluster of 3 (member 0 bootstraps and usually leads)
}

// newFixtureOn talks to member i.
func newFixtureOn(t *testing.T, c *membertest.Cluster, i int) *fixture {
	t.Helper()
	rc := c.RESTConfig(i)
	rc.WrapTransport = membertest.RetryUnavailable
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{c: c, cs: c.Clientset(i), dyn: dyn}
}

// namespace creates the namespace name.
func (f *fixture) namespace(t *testing.T, name string) string {
	t.Helper()
	_, err := f.cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// gcDeletes sums the garbage collector's deletions over the running
// members.
func (f *fixture) gcDeletes() uint64 {
	var n uint64
	for i := range f.c.N() {
		if m := f.c.Member(i); m != nil {
			n += m.Controllers().Stats().GCDeletes
		}
	}
	return n
}

// noResyncs checks that no member's informers fell behind the change feed.
func (f *fixture) noResyncs(t *testing.T) {
	t.Helper()
	for i := range f.c.N() {
		if m := f.c.Member(i); m != nil {
			if n := m.Controllers().Stats().Resyncs; n != 0 {
				t.Errorf("member %d: %d informer resyncs, want none", i, n)
			}
		}
	}
}

func ref(apiVersion, kind string, o metav1.Object, block bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: o.GetName(), UID: o.GetUID(),
		BlockOwnerDeletion: &block}
}

func cmRef(o metav1.Object) metav1.OwnerReference { return ref("v1", "ConfigMap", o, true) }

func (f *fixture) configMap(t *testing.T, ns, name string, owners ...metav1.OwnerReference) *corev1.ConfigMap {
	t.Helper()
	cm, err := f.cs.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create configmap %s/%s: %v", ns, name, err)
	}
	return cm
}

// waitGone waits until get answers 404.
func waitGone(t *testing.T, what string, get func(ctx context.Context) error) {
	t.Helper()
	membertest.WaitGone(t, 20*time.Second, what, get)
}

func (f *fixture) getCM(ns, name string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		_, err := f.cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		return err
	}
}

// recorder records the watch events of some resources of a namespace,
// ordered by resourceVersion (the Raft index: one order for all).
type recorder struct {
	mu     sync.Mutex
	events []recorded
	stop   []func()
	wg     sync.WaitGroup
}

type recorded struct {
	rv         int64
	typ        watch.EventType
	kind, name string
	uid        types.UID
	deleting   bool
	finalizers []string
}

func (r recorded) String() string {
	return fmt.Sprintf("%d %s %s/%s deleting=%v finalizers=%v", r.rv, r.typ, r.kind, r.name, r.deleting, r.finalizers)
}

func (f *fixture) record(t *testing.T, ns string, gvrs ...schema.GroupVersionResource) *recorder {
	t.Helper()
	r := &recorder{}
	for _, gvr := range gvrs {
		l, err := f.dyn.Resource(gvr).Namespace(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := f.dyn.Resource(gvr).Namespace(ns).Watch(t.Context(), metav1.ListOptions{ResourceVersion: l.GetResourceVersion()})
		if err != nil {
			t.Fatal(err)
		}
		r.stop = append(r.stop, w.Stop)
		r.wg.Go(func() {
			for ev := range w.ResultChan() {
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				var rv int64
				fmt.Sscan(u.GetResourceVersion(), &rv)
				r.mu.Lock()
				r.events = append(r.events, recorded{rv: rv, typ: ev.Type, kind: u.GetKind(), name: u.GetName(),
					uid: u.GetUID(), deleting: u.GetDeletionTimestamp() != nil, finalizers: u.GetFinalizers()})
				r.mu.Unlock()
			}
		})
	}
	t.Cleanup(r.close)
	return r
}

func (r *recorder) close() {
	for _, s := range r.stop {
		s()
	}
	r.wg.Wait()
}

// sorted returns the events so far in revision order.
func (r *recorder) sorted() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.events)
	sort.SliceStable(out, func(i, j int) bool { return out[i].rv < out[j].rv })
	return out
}

// deleted returns the revision at which kind/name was deleted (0: not
// seen) and fails when it was deleted more than once.
func deletedAt(t *testing.T, evs []recorded, kind, name string) int64 {
	t.Helper()
	var at int64
	for _, e := range evs {
		if e.typ == watch.Deleted && e.kind == kind && e.name == name {
			if at != 0 {
				t.Errorf("%s %s deleted twice (revisions %d and %d)", kind, name, at, e.rv)
			}
			at = e.rv
		}
	}
	return at
}

var (
	deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	replicasetsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	podsGVR        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	configmapsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

func podTemplate(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
}

// deploymentChain creates a Deployment, a ReplicaSet it owns and pods the
// ReplicaSet owns, every reference blocking, that the workload
// controllers leave alone: the references are not controller references,
// the Deployment is paused, and the ReplicaSet wants no pods and selects
// none (its labels are not the Deployment's).
func (f *fixture) deploymentChain(t *testing.T, ns, name string, pods int) (*appsv1.Deployment, *appsv1.ReplicaSet) {
	t.Helper()
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
	d, err := f.cs.AppsV1().Deployments(ns).Create(t.Context(), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{Selector: sel, Template: podTemplate(name), Paused: true}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	zero := int32(0)
	rsSel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": name + "-rs"}}
	rs, err := f.cs.AppsV1().ReplicaSets(ns).Create(t.Context(), &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{
		Name: name + "-rs", OwnerReferences: []metav1.OwnerReference{ref("apps/v1", "Deployment", d, true)}},
		Spec: appsv1.ReplicaSetSpec{Replicas: &zero, Selector: rsSel, Template: podTemplate(name + "-rs")}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range pods {
		tpl := podTemplate(name)
		_, err := f.cs.CoreV1().Pods(ns).Create(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-pod-%d", name, i), Labels: tpl.Labels,
			OwnerReferences: []metav1.OwnerReference{ref("apps/v1", "ReplicaSet", rs, true)}},
			Spec: tpl.Spec}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	return d, rs
}

func dump(evs []recorded) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintln(&b, e)
	}
	return b.String()
}
