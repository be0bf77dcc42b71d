package resourcequota_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/member/membertest"
	"github.com/litek8s/litek8s/internal/quota"
)

func rl(kvs ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kvs); i += 2 {
		l[corev1.ResourceName(kvs[i])] = resource.MustParse(kvs[i+1])
	}
	return l
}

func pod(name string, requests corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
		NodeSelector: map[string]string{"x-test.k8s.io/unsatisfiable": "not-schedulable"},
		Containers:   []corev1.Container{{Name: "c", Image: "pause", Resources: corev1.ResourceRequirements{Requests: requests}}}}}
}

// waitUsed waits until quota name reports status.hard = spec.hard and
// the used values of want (others are not compared).
func waitUsed(t *testing.T, cs kubernetes.Interface, ns, name string, d time.Duration, want corev1.ResourceList) {
	t.Helper()
	membertest.Eventually(t, d, func() error {
		q, err := cs.CoreV1().ResourceQuotas(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !quota.Equal(q.Status.Hard, q.Spec.Hard) {
			return fmt.Errorf("status.hard %s, spec.hard %s", quota.String(q.Status.Hard), quota.String(q.Spec.Hard))
		}
		for n := range q.Spec.Hard {
			if _, ok := q.Status.Used[n]; !ok {
				return fmt.Errorf("no usage of %s in %s", n, quota.String(q.Status.Used))
			}
		}
		if got := quota.Mask(q.Status.Used, quota.Names(want)); !quota.Equal(got, want) {
			return fmt.Errorf("used %s, want %s", quota.String(got), quota.String(want))
		}
		return nil
	})
}

func wantForbidden(t *testing.T, err error, msg string) {
	t.Helper()
	if !apierrors.IsForbidden(err) || err.Error() != msg {
		t.Fatalf("error %v, want 403 %q", err, msg)
	}
}

// The resourcequota controller and the quota admission in a cluster of 3,
// driven through a follower (writes forwarded to the leader) with
// client-go.
func TestResourceQuota(t *testing.T) {
	c := membertest.StartCluster(t, 3)
	ctx := t.Context()
	cs := c.Clientset(c.Follower())
	leader := c.Clientset(c.WaitLeader())
	ns := "quota"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hard := rl("pods", "5", "cpu", "1", "memory", "500Mi", "services", "10", "services.nodeports", "1", "services.loadbalancers", "1",
		"secrets", "10", "count/replicasets.apps", "5", "resourcequotas", "1", "requests.example.com/dongle", "3")
	if _, err := cs.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "test-quota"},
		Spec: corev1.ResourceQuotaSpec{Hard: hard}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUsed(t, cs, ns, "test-quota", 10*time.Second, rl("resourcequotas", "1", "pods", "0", "cpu", "0", "count/replicasets.apps", "0"))

	t.Run("pods", func(t *testing.T) {
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod("fits", rl("cpu", "500m", "memory", "252Mi", "example.com/dongle", "2")), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// The admission charged it before the pod was stored.
		waitUsed(t, cs, ns, "test-quota", 5*time.Second, rl("pods", "1", "cpu", "500m", "memory", "252Mi", "requests.example.com/dongle", "2"))
		_, err := cs.CoreV1().Pods(ns).Create(ctx, pod("fail-pod", rl("cpu", "600m", "memory", "100Mi")), metav1.CreateOptions{})
		wantForbidden(t, err, `pods "fail-pod" is forbidden: exceeded quota: test-quota, requested: cpu=600m, used: cpu=500m, limited: cpu=1`)
		_, err = cs.CoreV1().Pods(ns).Create(ctx, pod("dongles", rl("cpu", "100m", "memory", "10Mi", "example.com/dongle", "2")), metav1.CreateOptions{})
		wantForbidden(t, err, `pods "dongles" is forbidden: exceeded quota: test-quota, requested: requests.example.com/dongle=2, used: requests.example.com/dongle=2, limited: requests.example.com/dongle=3`)
		_, err = cs.CoreV1().Pods(ns).Create(ctx, pod("no-requests", nil), metav1.CreateOptions{})
		wantForbidden(t, err, `pods "no-requests" is forbidden: failed quota: test-quota: must specify cpu for: c; memory for: c`)

		// Two creates race for the room of one (500m left, 300m each),
		// one through the follower, one on the leader: exactly one wins.
		var wg sync.WaitGroup
		errs := make([]error, 2)
		start := make(chan struct{})
		for i, client := range []kubernetes.Interface{cs, leader} {
			wg.Go(func() {
				<-start
				_, errs[i] = client.CoreV1().Pods(ns).Create(ctx, pod(fmt.Sprintf("racer-%d", i), rl("cpu", "300m", "memory", "10Mi")), metav1.CreateOptions{})
			})
		}
		close(start)
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !apierrors.IsForbidden(err):
				t.Errorf("racer: %v, want success or 403", err)
			}
		}
		if won != 1 {
			t.Fatalf("%d of 2 racing creates succeeded (%v), want 1", won, errs)
		}
		waitUsed(t, cs, ns, "test-quota", 5*time.Second, rl("pods", "2", "cpu", "800m"))

		// Deleting a pod frees its quota within seconds (replenishment).
		if err := cs.CoreV1().Pods(ns).Delete(ctx, "fits", *metav1.NewDeleteOptions(0)); err != nil {
			t.Fatal(err)
		}
		waitUsed(t, cs, ns, "test-quota", 5*time.Second, rl("pods", "1", "cpu", "300m", "memory", "10Mi", "requests.example.com/dongle", "0"))
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod("fits-again", rl("cpu", "700m", "memory", "100Mi")), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create after the delete freed quota: %v", err)
		}
	})

	t.Run("services", func(t *testing.T) {
		svc := func(name string, typ corev1.ServiceType) *corev1.Service {
			return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: corev1.ServiceSpec{Type: typ, Ports: []corev1.ServicePort{{Port: 80}}}}
		}
		for _, s := range []*corev1.Service{svc("cip", corev1.ServiceTypeClusterIP), svc("np", corev1.ServiceTypeNodePort)} {
			if _, err := cs.CoreV1().Services(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		_, err := cs.CoreV1().Services(ns).Create(ctx, svc("lb", corev1.ServiceTypeLoadBalancer), metav1.CreateOptions{})
		wantForbidden(t, err, `services "lb" is forbidden: exceeded quota: test-quota, requested: services.nodeports=1, used: services.nodeports=1, limited: services.nodeports=1`)
		waitUsed(t, cs, ns, "test-quota", 5*time.Second, rl("services", "2", "services.nodeports", "1", "services.loadbalancers", "0"))
		// An update that needs a node port more is charged too.
		_, err = cs.CoreV1().Services(ns).Patch(ctx, "cip", types.MergePatchType, []byte(`{"spec":{"type":"NodePort"}}`), metav1.PatchOptions{})
		wantForbidden(t, err, `services "cip" is forbidden: exceeded quota: test-quota, requested: services.nodeports=1, used: services.nodeports=1, limited: services.nodeports=1`)
		if _, err := cs.CoreV1().Services(ns).Patch(ctx, "cip", types.MergePatchType, []byte(`{"metadata":{"labels":{"a":"b"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatalf("an update that uses nothing more: %v", err)
		}
		for _, name := range []string{"cip", "np"} {
			if err := cs.CoreV1().Services(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		waitUsed(t, cs, ns, "test-quota", 5*time.Second, rl("services", "0", "services.nodeports", "0"))
	})

	t.Run("object counts", func(t *testing.T) {
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs"}, Spec: appsv1.ReplicaSetSpec{Replicas: new(int32),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}}}}}
		if _, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitUsed(t, cs, ns, "test-quota", 5*time.Second, rl("count/replicasets.apps", "1", "secrets", "1"))
		_, err := cs.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "second"},
			Spec: corev1.ResourceQuotaSpec{Hard: rl("pods", "1")}}, metav1.CreateOptions{})
		wantForbidden(t, err, `resourcequotas "second" is forbidden: exceeded quota: test-quota, requested: resourcequotas=1, used: resourcequotas=1, limited: resourcequotas=1`)
		if err := cs.AppsV1().ReplicaSets(ns).Delete(ctx, "rs", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := cs.CoreV1().Secrets(ns).Delete(ctx, "s", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitUsed(t, cs, ns, "test-quota", 5*time.Second, rl("count/replicasets.apps", "0", "secrets", "0"))
	})

	t.Run("scopes", func(t *testing.T) { testScopes(ctx, t, cs) })
	c.SameObjects(ctx, "/api/v1/resourcequotas", "/api/v1/pods")
}

// testScopes: a BestEffort quota counts best-effort pods only, a
// NotBestEffort one the others.
func testScopes(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	ns := "scopes"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, scope := range map[string]corev1.ResourceQuotaScope{"be": corev1.ResourceQuotaScopeBestEffort, "not-be": corev1.ResourceQuotaScopeNotBestEffort} {
		if _, err := cs.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ResourceQuotaSpec{Hard: rl("pods", "1"), Scopes: []corev1.ResourceQuotaScope{scope}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitUsed(t, cs, ns, name, 10*time.Second, rl("pods", "0"))
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod("best-effort", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUsed(t, cs, ns, "be", 5*time.Second, rl("pods", "1"))
	waitUsed(t, cs, ns, "not-be", 5*time.Second, rl("pods", "0"))
	_, err := cs.CoreV1().Pods(ns).Create(ctx, pod("best-effort-2", nil), metav1.CreateOptions{})
	wantForbidden(t, err, `pods "best-effort-2" is forbidden: exceeded quota: be, requested: pods=1, used: pods=1, limited: pods=1`)
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod("burstable", rl("cpu", "100m")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUsed(t, cs, ns, "not-be", 5*time.Second, rl("pods", "1"))
	waitUsed(t, cs, ns, "be", 5*time.Second, rl("pods", "1"))
}
