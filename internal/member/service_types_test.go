package member_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// A Service changing type through client-go updates, as the e2e service
// jig does (GET, change the type, PUT): kube wipes the cluster IPs and
// IP family fields on a change to ExternalName, allocates them back on a
// change from it, allocates node ports for NodePort and LoadBalancer and
// releases them on a change back to ClusterIP; a node port another
// service holds is refused.
func TestServiceTypeChanges(t *testing.T) {
	c := membertest.StartCluster(t, 1, membertest.FastRaft)
	cs := c.PlainClientset(0)
	ctx := t.Context()
	createNamespace(t, cs, "svc")
	svcs := cs.CoreV1().Services("svc")
	update := func(name string, fn func(*corev1.Service)) (*corev1.Service, error) {
		t.Helper()
		s, err := svcs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fn(s)
		return svcs.Update(ctx, s, metav1.UpdateOptions{})
	}
	mustUpdate := func(name string, fn func(*corev1.Service)) *corev1.Service {
		t.Helper()
		s, err := update(name, fn)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	_, err := svcs.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "a"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "a"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	s := mustUpdate("a", func(s *corev1.Service) {
		s.Spec.Type, s.Spec.ExternalName = corev1.ServiceTypeExternalName, "example.com"
	})
	if s.Spec.ClusterIP != "" || s.Spec.ClusterIPs != nil || s.Spec.IPFamilies != nil || s.Spec.IPFamilyPolicy != nil {
		t.Fatalf("ExternalName service kept %q %v %v %v", s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.IPFamilies, s.Spec.IPFamilyPolicy)
	}

	s = mustUpdate("a", func(s *corev1.Service) {
		s.Spec.Type, s.Spec.ExternalName = corev1.ServiceTypeClusterIP, ""
	})
	if s.Spec.ClusterIP == "" || len(s.Spec.ClusterIPs) != 1 || s.Spec.ClusterIPs[0] != s.Spec.ClusterIP ||
		len(s.Spec.IPFamilies) != 1 || s.Spec.IPFamilyPolicy == nil {
		t.Fatalf("ClusterIP service from ExternalName: %q %v %v %v", s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.IPFamilies, s.Spec.IPFamilyPolicy)
	}
	ip := s.Spec.ClusterIP

	s = mustUpdate("a", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort })
	np := s.Spec.Ports[0].NodePort
	if np < 30000 || np > 32767 || s.Spec.ClusterIP != ip || s.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster {
		t.Fatalf("NodePort service: nodePort %d, clusterIP %q (was %q), externalTrafficPolicy %q",
			np, s.Spec.ClusterIP, ip, s.Spec.ExternalTrafficPolicy)
	}

	_, err = svcs.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "b"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort,
			Ports: []corev1.ServicePort{{Port: 81, NodePort: np}}}}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "provided port is already allocated") {
		t.Fatalf("a second service on node port %d: %v, want 422 already allocated", np, err)
	}

	// an update leaving the node port out keeps it; LoadBalancer keeps it too
	s = mustUpdate("a", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		s.Spec.Ports[0].NodePort = 0
	})
	if s.Spec.Ports[0].NodePort != np || s.Spec.AllocateLoadBalancerNodePorts == nil || !*s.Spec.AllocateLoadBalancerNodePorts {
		t.Fatalf("LoadBalancer service: nodePort %d (was %d), allocateLoadBalancerNodePorts %v", s.Spec.Ports[0].NodePort, np, s.Spec.AllocateLoadBalancerNodePorts)
	}

	s = mustUpdate("a", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeClusterIP })
	if s.Spec.Ports[0].NodePort != 0 || s.Spec.ExternalTrafficPolicy != "" || s.Spec.AllocateLoadBalancerNodePorts != nil {
		t.Fatalf("ClusterIP service from LoadBalancer: nodePort %d, externalTrafficPolicy %q, allocateLoadBalancerNodePorts %v",
			s.Spec.Ports[0].NodePort, s.Spec.ExternalTrafficPolicy, s.Spec.AllocateLoadBalancerNodePorts)
	}
	// the released port is free again
	b, err := svcs.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "b"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort,
			Ports: []corev1.ServicePort{{Port: 81, NodePort: np}}}}, metav1.CreateOptions{})
	if err != nil || b.Spec.Ports[0].NodePort != np {
		t.Fatalf("node port %d after its release: %v", np, err)
	}

	checkServiceRefused(t, cs, "a", func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 30001 },
		"spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'")
	checkServiceRefused(t, cs, "b", func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 80 },
		"provided port is not in the valid range")
	checkServiceRefused(t, cs, "a", func(s *corev1.Service) {
		s.Spec.Type, s.Spec.ExternalName = corev1.ServiceTypeExternalName, "example.com"
		s.Spec.ClusterIPs = []string{"10.96.0.99"}
	}, "spec.clusterIPs: Forbidden: may not be set for ExternalName services")
}

// checkServiceRefused updates svc/name with fn and wants a 422 saying msg,
// the stored object unchanged.
func checkServiceRefused(t *testing.T, cs *kubernetes.Clientset, name string, fn func(*corev1.Service), msg string) {
	t.Helper()
	svcs := cs.CoreV1().Services("svc")
	s, err := svcs.Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rv := s.ResourceVersion
	fn(s)
	_, err = svcs.Update(t.Context(), s, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), msg) {
		t.Fatalf("update of %s: %v, want 422 %q", name, err, msg)
	}
	if s, err = svcs.Get(t.Context(), name, metav1.GetOptions{}); err != nil || s.ResourceVersion != rv {
		t.Fatalf("refused update changed %s: %v", name, err)
	}
}

// The e2e "service status lifecycle": a merge patch of services/status
// that also adds an annotation keeps the annotation (kube's service
// status strategy keeps the metadata a status write sends; only the spec
// is the stored one), and a watch with a label selector from the
// revision of an earlier list sees the patched service.
func TestServiceStatusPatchKeepsMetadata(t *testing.T) {
	c := membertest.StartCluster(t, 1, membertest.FastRaft)
	cs := c.PlainClientset(0)
	ctx := t.Context()
	createNamespace(t, cs, "svc")
	svcs := cs.CoreV1().Services("svc")
	sel := metav1.ListOptions{LabelSelector: "static=true"}
	l, err := cs.CoreV1().Services("").List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	_, err = svcs.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "lb", Labels: map[string]string{"static": "true"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: ptr.To("example.com/internal-vip"),
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = svcs.Patch(ctx, "lb", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"patchedstatus":"true"}},"spec":{"externalName":"x.example"},"status":{"loadBalancer":{"ingress":[{"ip":"203.0.113.1"}]}}}`),
		metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	s, err := svcs.Get(ctx, "lb", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Annotations["patchedstatus"] != "true" || s.Spec.ExternalName != "" ||
		len(s.Status.LoadBalancer.Ingress) != 1 || !reflect.DeepEqual(s.Status.LoadBalancer.Ingress[0].IPMode, ptr.To(corev1.LoadBalancerIPModeVIP)) {
		t.Fatalf("after the status patch: annotations %v, type %s, status %+v", s.Annotations, s.Spec.Type, s.Status)
	}
	sel.ResourceVersion = l.ResourceVersion
	w, err := svcs.Watch(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-w.ResultChan():
			if s, ok := ev.Object.(*corev1.Service); ok && s.Annotations["patchedstatus"] == "true" {
				return
			}
		case <-timeout:
			t.Fatal("the watch did not see the patched service")
		}
	}
}
