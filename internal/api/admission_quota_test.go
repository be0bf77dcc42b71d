package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/litek8s/litek8s/internal/kv"
	"github.com/litek8s/litek8s/internal/quota"
	"github.com/litek8s/litek8s/internal/raftstore"
)

func rl(kvs ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kvs); i += 2 {
		l[corev1.ResourceName(kvs[i])] = apiresource.MustParse(kvs[i+1])
	}
	return l
}

func storedQ(name string, hard, used corev1.ResourceList) storedQuota {
	return storedQuota{cur: &kv.Object{RV: 7}, q: &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec: corev1.ResourceQuotaSpec{Hard: hard}, Status: corev1.ResourceQuotaStatus{Hard: hard, Used: used}}}
}

func quotaPod(requests corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: requests}}}}}
}

// evaluateQuotas answers kube's messages and charges what fits.
func TestEvaluateQuotas(t *testing.T) {
	now := time.Now()
	lb := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}}}}
	np := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}}}}
	cip := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{{Port: 80}}}}
	cases := []struct {
		name     string
		quotas   []storedQuota
		resource string
		obj, old runtime.Object
		wantErr  string
		wantUsed []string // status.used of each charged quota
	}{
		{name: "fits", quotas: []storedQuota{storedQ("q", rl("pods", "2", "cpu", "1"), rl("pods", "1", "cpu", "500m"))},
			resource: "pods", obj: quotaPod(rl("cpu", "500m")), wantUsed: []string{"cpu=1,pods=2"}},
		{name: "exceeds", quotas: []storedQuota{storedQ("test-quota", rl("pods", "5", "cpu", "1", "memory", "500Mi"), rl("pods", "1", "cpu", "500m", "memory", "252Mi"))},
			resource: "pods", obj: quotaPod(rl("cpu", "600m", "memory", "100Mi")),
			wantErr: "exceeded quota: test-quota, requested: cpu=600m, used: cpu=500m, limited: cpu=1"},
		{name: "must specify", quotas: []storedQuota{storedQ("q", rl("pods", "5", "requests.memory", "1Gi"), rl("pods", "0", "requests.memory", "0"))},
			resource: "pods", obj: quotaPod(rl("cpu", "1")), wantErr: "failed quota: q: must specify requests.memory for: c"},
		{name: "status unknown", quotas: []storedQuota{storedQ("q", rl("pods", "5", "cpu", "1"), nil)},
			resource: "pods", obj: quotaPod(rl("cpu", "1")), wantErr: "status unknown for quota: q, resources: cpu,pods"},
		{name: "not synced yet: no status.hard", quotas: []storedQuota{{cur: &kv.Object{}, q: &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"},
			Spec: corev1.ResourceQuotaSpec{Hard: rl("pods", "0")}}}}, resource: "pods", obj: quotaPod(nil)},
		{name: "load balancer over node ports", quotas: []storedQuota{storedQ("q", rl("services", "10", "services.nodeports", "1", "services.loadbalancers", "1"),
			rl("services", "2", "services.nodeports", "1", "services.loadbalancers", "0"))},
			resource: "services", obj: lb, wantErr: "exceeded quota: q, requested: services.nodeports=1, used: services.nodeports=1, limited: services.nodeports=1"},
		{name: "update to node port", quotas: []storedQuota{storedQ("q", rl("services", "1", "services.nodeports", "1"), rl("services", "1", "services.nodeports", "0"))},
			resource: "services", obj: np, old: cip, wantUsed: []string{"services=1,services.nodeports=1"}},
		{name: "update that uses nothing more", quotas: []storedQuota{storedQ("q", rl("services", "1", "services.nodeports", "1"), rl("services", "1", "services.nodeports", "1"))},
			resource: "services", obj: np, old: np},
		{name: "object count", quotas: []storedQuota{storedQ("q", rl("count/replicasets.apps", "1"), rl("count/replicasets.apps", "1"))},
			resource: "replicasets.apps", obj: &metav1.PartialObjectMetadata{},
			wantErr: "exceeded quota: q, requested: count/replicasets.apps=1, used: count/replicasets.apps=1, limited: count/replicasets.apps=1"},
		{name: "scoped quota ignores others", quotas: []storedQuota{
			func() storedQuota {
				q := storedQ("be", rl("pods", "0"), rl("pods", "0"))
				q.q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}
				return q
			}(), storedQ("all", rl("pods", "2"), rl("pods", "0"))},
			resource: "pods", obj: quotaPod(rl("cpu", "1")), wantUsed: []string{"pods=1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			charged, err := evaluateQuotas(c.quotas, c.resource, c.obj, c.old, now)
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("error = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(charged) != len(c.wantUsed) {
				t.Fatalf("charged %d quotas, want %d", len(charged), len(c.wantUsed))
			}
			for i, ch := range charged {
				if got := quota.String(ch.q.Status.Used); got != c.wantUsed[i] {
					t.Errorf("used = %s, want %s", got, c.wantUsed[i])
				}
			}
		})
	}
}

// quotaServer is a single-member store behind a Server, with a quota in
// namespace "limited" (none in "free").
func quotaServer(tb testing.TB) *Server {
	tb.Helper()
	sc := raftstore.DefaultConfig()
	sc.DataDir, sc.RaftAddr, sc.Bootstrap = tb.TempDir(), "127.0.0.1:0", true
	sc.HeartbeatTimeout, sc.ElectionTimeout, sc.LeaderLeaseTimeout = 100*time.Millisecond, 100*time.Millisecond, 50*time.Millisecond
	sc.Derive = Derive
	sc.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := raftstore.Open(sc)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	ac := DefaultConfig()
	ac.Token, ac.Logger = "t", sc.Logger
	srv, err := New(ac, st)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for srv.EnsureNamespaces(ctx, "limited", "free") != nil {
		if ctx.Err() != nil {
			tb.Fatal(ctx.Err())
		}
		time.Sleep(20 * time.Millisecond)
	}
	raw, _ := json.Marshal(&corev1.ResourceQuota{TypeMeta: metav1.TypeMeta{Kind: "ResourceQuota", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "limited"}, Spec: corev1.ResourceQuotaSpec{Hard: rl("pods", "1")}})
	if _, err := st.Propose(ctx, kv.Write{Op: kv.OpCreate, Key: kv.Key{Resource: "resourcequotas", Namespace: "limited", Name: "q"}, Object: raw}); err != nil {
		tb.Fatal(err)
	}
	return srv
}

// A write to a namespace without quotas allocates nothing for quota.
func TestAdmitQuotaNoQuotaAllocs(t *testing.T) {
	srv := quotaServer(t)
	q := &request{res: srv.registry().Lookup("v1", "configmaps"), namespace: "free", name: "cm"}
	obj := &corev1.ConfigMap{}
	ctx := t.Context()
	if n := testing.AllocsPerRun(100, func() {
		if err := srv.admitQuota(ctx, q, obj, nil, false); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("admitQuota in a namespace without quotas: %v allocations, want 0", n)
	}
}

func BenchmarkAdmitQuota(b *testing.B) {
	srv := quotaServer(b)
	cms := srv.registry().Lookup("v1", "configmaps")
	for _, c := range []struct{ name, ns string }{{"no quota", "free"}, {"quota not limiting configmaps", "limited"}} {
		b.Run(c.name, func(b *testing.B) {
			q := &request{res: cms, namespace: c.ns, name: "cm"}
			obj := &corev1.ConfigMap{}
			b.ReportAllocs()
			for b.Loop() {
				if err := srv.admitQuota(b.Context(), q, obj, nil, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
