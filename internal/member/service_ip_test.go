package member_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// Cluster IPs are unique: a requested address another Service holds is
// refused with kube's allocator message, allocated ones never repeat,
// and a deleted Service's address can be asked for again.
func TestServiceClusterIPsUnique(t *testing.T) {
	c := membertest.StartCluster(t, 1, membertest.FastRaft)
	cs := c.PlainClientset(0)
	ctx := t.Context()
	createNamespace(t, cs, "ips")
	svcs := cs.CoreV1().Services("ips")
	svc := func(name, ip string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{ClusterIP: ip,
			Ports: []corev1.ServicePort{{Port: 80}}}}
	}
	if _, err := svcs.Create(ctx, svc("fixed", "10.96.0.50"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := svcs.Create(ctx, svc("same", "10.96.0.50"), metav1.CreateOptions{})
	const want = `Service "same" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.50"]: failed to allocate IP 10.96.0.50: provided IP is already allocated`
	if err == nil || err.Error() != want {
		t.Fatalf("second service on 10.96.0.50: %v, want %q", err, want)
	}
	seen := map[string]string{"10.96.0.50": "fixed"}
	for i := range 50 {
		name := fmt.Sprintf("auto-%d", i)
		s, err := svcs.Create(ctx, svc(name, ""), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if other, dup := seen[s.Spec.ClusterIP]; dup || s.Spec.ClusterIP == "" {
			t.Fatalf("%s got %q, which %s holds", name, s.Spec.ClusterIP, other)
		}
		seen[s.Spec.ClusterIP] = name
	}
	if err := svcs.Delete(ctx, "fixed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := svcs.Create(ctx, svc("again", "10.96.0.50"), metav1.CreateOptions{}); err != nil {
		t.Errorf("10.96.0.50 after its service was deleted: %v", err)
	}
}
