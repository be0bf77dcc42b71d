package kubernetesservice_test

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// addressesOf returns "ip:port" of every address of the Endpoints and of
// the EndpointSlices labelled for the kubernetes Service, each sorted.
func addressesOf(t *testing.T, cs kubernetes.Interface) (eps, slcs []string, err error) {
	t.Helper()
	ctx := t.Context()
	ep, err := cs.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	for _, s := range ep.Subsets {
		for _, a := range s.Addresses {
			eps = append(eps, a.IP+":"+strconv.Itoa(int(s.Ports[0].Port)))
		}
	}
	sl, err := cs.DiscoveryV1().EndpointSlices("default").List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=kubernetes"})
	if err != nil {
		return nil, nil, err
	}
	for _, s := range sl.Items {
		for _, e := range s.Endpoints {
			slcs = append(slcs, e.Addresses[0]+":"+strconv.Itoa(int(*s.Ports[0].Port)))
		}
	}
	slices.Sort(eps)
	slices.Sort(slcs)
	return eps, slcs, nil
}

func hostPorts(c *membertest.Cluster, idx ...int) []string {
	var out []string
	for _, i := range idx {
		u, _ := url.Parse(c.URL(i))
		out = append(out, u.Host)
	}
	slices.Sort(out)
	return out
}

// The kubernetes Service of a 3-member cluster lists the three members'
// API addresses; a stopped member (follower or leader) drops out, a
// restarted one comes back;
// a deleted Endpoints comes back; no other Service gets its ClusterIP.
func TestKubernetesService(t *testing.T) {
	c := membertest.StartCluster(t, 3, func(cfg *member.Config) {
		cfg.Controllers.Cluster.KubernetesService.Interval = 200 * time.Millisecond
		cfg.Controllers.Cluster.KubernetesService.MemberTTL = time.Second
	})
	leader := c.WaitLeader()
	rc := c.RESTConfig(leader)
	rc.WrapTransport = membertest.RetryUnavailable
	cs := kubernetes.NewForConfigOrDie(rc)
	ctx := t.Context()
	listed := func(want []string) func() error {
		return func() error {
			eps, slcs, err := addressesOf(t, cs)
			switch {
			case err != nil:
				return err
			case !slices.Equal(eps, want) || !slices.Equal(slcs, want):
				return fmt.Errorf("endpoints %v, slices %v, want %v", eps, slcs, want)
			}
			return nil
		}
	}
	membertest.Eventually(t, 15*time.Second, listed(hostPorts(c, 0, 1, 2)))

	svc, err := cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP != "10.96.0.1" || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 443 ||
		svc.Spec.Ports[0].Name != "https" || svc.Spec.Selector != nil || svc.Labels["component"] != "apiserver" ||
		svc.Labels["provider"] != "kubernetes" || svc.ManagedFields[0].Manager != "kube-apiserver" {
		t.Errorf("kubernetes Service %+v", svc)
	}
	if tp := svc.Spec.Ports[0].TargetPort.IntValue(); !slices.Contains(hostPorts(c, 0, 1, 2), "127.0.0.1:"+strconv.Itoa(tp)) {
		t.Errorf("targetPort %d is no member's API port", tp)
	}
	ep, err := cs.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil || ep.Labels["endpointslice.kubernetes.io/skip-mirror"] != "true" {
		t.Errorf("Endpoints %+v %v: want the skip-mirror label", ep, err)
	}
	sl, err := cs.DiscoveryV1().EndpointSlices("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil || len(sl.Labels) != 1 || *sl.Endpoints[0].Conditions.Ready != true {
		t.Errorf("EndpointSlice kubernetes %+v %v: want the service-name label only, ready endpoints", sl, err)
	}

	// The default ServiceCIDR holds the range, Ready.
	membertest.Eventually(t, 10*time.Second, func() error {
		sc, err := cs.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !slices.Equal(sc.Spec.CIDRs, []string{"10.96.0.0/12"}) || len(sc.Status.Conditions) != 1 ||
			sc.Status.Conditions[0].Type != "Ready" || sc.Status.Conditions[0].Status != metav1.ConditionTrue {
			return fmt.Errorf("default ServiceCIDR %+v", sc)
		}
		return nil
	})

	// No other Service gets 10.96.0.1.
	other := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "thief"}, Spec: corev1.ServiceSpec{
		ClusterIP: "10.96.0.1", Ports: []corev1.ServicePort{{Port: 80}}}}
	_, err = cs.CoreV1().Services("default").Create(ctx, other, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Errorf("a Service asking for 10.96.0.1: %v, want 422", err)
	}

	// A follower leaves: it drops out; it comes back: it is listed again.
	f := c.Follower()
	c.Stop(f)
	var rest []int
	for i := range 3 {
		if i != f {
			rest = append(rest, i)
		}
	}
	membertest.Eventually(t, 15*time.Second, listed(hostPorts(c, rest...)))
	c.Restart(f)
	membertest.Eventually(t, 15*time.Second, listed(hostPorts(c, 0, 1, 2)))

	// The leader leaves: the next leader takes over and drops it.
	l := c.WaitLeader()
	c.Stop(l)
	rest = rest[:0]
	for i := range 3 {
		if i != l {
			rest = append(rest, i)
		}
	}
	rc = c.RESTConfig(rest[0])
	rc.WrapTransport = membertest.RetryUnavailable
	cs = kubernetes.NewForConfigOrDie(rc)
	membertest.Eventually(t, 20*time.Second, listed(hostPorts(c, rest...)))
	c.Restart(l)
	membertest.Eventually(t, 15*time.Second, listed(hostPorts(c, 0, 1, 2)))

	// Deleted, the Endpoints come back.
	if err := cs.CoreV1().Endpoints("default").Delete(ctx, "kubernetes", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	membertest.Eventually(t, 15*time.Second, listed(hostPorts(c, 0, 1, 2)))

	// Nothing changes: nothing is written (several intervals later, the
	// same resourceVersions).
	rvs := func() string {
		svc, err1 := cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		ep, err2 := cs.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		sl, err3 := cs.DiscoveryV1().EndpointSlices("default").List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=kubernetes"})
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatal(err1, err2, err3)
		}
		out := svc.ResourceVersion + " " + ep.ResourceVersion
		for _, s := range sl.Items {
			out += " " + s.ResourceVersion
		}
		return out
	}
	before := rvs()
	time.Sleep(time.Second) // 5 intervals: a write would show
	if after := rvs(); after != before {
		t.Errorf("resourceVersions went from %s to %s with no member change", before, after)
	}
	c.SameObjects(ctx, "/api/v1/services", "/api/v1/endpoints", "/apis/discovery.k8s.io/v1/endpointslices")
}
