package endpoints_test

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// The Endpoints and EndpointSlices of a service follow its pods becoming
// ready, not ready, terminating and gone, with named target ports
// resolved per pod. There is no kubelet: the test sets the pods' IPs and
// Ready conditions itself, on pods created bound to a node.
func TestEndpoints(t *testing.T) {
	c := membertest.StartCluster(t, 1)
	cs := c.Clientset(0)
	ctx := t.Context()
	const ns = "web"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"tier": "front"}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{
			{Name: "http", Port: 80, TargetPort: intstr.FromString("http")},
			{Name: "metrics", Port: 9090, TargetPort: intstr.FromInt32(9100)},
		}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A service without a selector gets nothing from the controllers.
	if _, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "manual"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// No pod yet: empty Endpoints and one empty slice.
	wait(t, "empty endpoints", func() error {
		if err := checkEndpoints(ctx, cs, ns, "web", ""); err != nil {
			return err
		}
		return checkSlices(ctx, cs, svc, "")
	})

	pod(t, cs, ns, "web-0", "app=web", "http:8080", "10.0.0.10", true)
	pod(t, cs, ns, "web-1", "app=web", "http:8080", "10.0.0.11", false)
	pod(t, cs, ns, "web-2", "app=web", "http:8081", "10.0.0.12", true) // "http" is another port here
	pod(t, cs, ns, "web-3", "app=web", "http:8080", "", true)          // no IP yet: skipped
	pod(t, cs, ns, "web-4", "app=web", "grpc:8080", "10.0.0.14", true) // no port named "http": only metrics
	pod(t, cs, ns, "other", "app=other", "http:8080", "10.0.0.20", true)
	wait(t, "endpoints of the pods", func() error {
		if err := checkEndpoints(ctx, cs, ns, "web",
			"[http/8080 metrics/9100] ready=web-0@10.0.0.10 notready=web-1@10.0.0.11 | "+
				"[http/8081 metrics/9100] ready=web-2@10.0.0.12 notready= | "+
				"[metrics/9100] ready=web-4@10.0.0.14 notready="); err != nil {
			return err
		}
		return checkSlices(ctx, cs, svc,
			"[http/8080 metrics/9100] web-0@10.0.0.10:ready,serving web-1@10.0.0.11: | "+
				"[http/8081 metrics/9100] web-2@10.0.0.12:ready,serving | "+
				"[metrics/9100] web-4@10.0.0.14:ready,serving")
	})

	// web-1 becomes ready; web-3 gets its IP; web-2 stops being ready.
	setStatus(t, cs, ns, "web-1", "10.0.0.11", true)
	setStatus(t, cs, ns, "web-3", "10.0.0.13", true)
	setStatus(t, cs, ns, "web-2", "10.0.0.12", false)
	wait(t, "endpoints after status changes", func() error {
		if err := checkEndpoints(ctx, cs, ns, "web",
			"[http/8080 metrics/9100] ready=web-0@10.0.0.10,web-1@10.0.0.11,web-3@10.0.0.13 notready= | "+
				"[http/8081 metrics/9100] ready= notready=web-2@10.0.0.12 | "+
				"[metrics/9100] ready=web-4@10.0.0.14 notready="); err != nil {
			return err
		}
		return checkSlices(ctx, cs, svc,
			"[http/8080 metrics/9100] web-0@10.0.0.10:ready,serving web-1@10.0.0.11:ready,serving web-3@10.0.0.13:ready,serving | "+
				"[http/8081 metrics/9100] web-2@10.0.0.12: | "+
				"[metrics/9100] web-4@10.0.0.14:ready,serving")
	})
	if out, ok := kubectl(t, c.Kubeconfig(0), "get", "endpointslices", "-n", ns); ok {
		if !strings.Contains(out, "10.0.0.10,10.0.0.11,10.0.0.13") || !strings.Contains(out, "IPv4") {
			t.Errorf("kubectl get endpointslices:\n%s", out)
		}
		t.Logf("kubectl get endpointslices:\n%s", out)
	}

	// web-0 is deleted gracefully: terminating (serving, not ready) in its
	// slice, gone from the Endpoints. web-4 and web-2 go at once.
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "web-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	for _, name := range []string{"web-2", "web-4"} {
		if err := cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatal(err)
		}
	}
	wait(t, "endpoints with a pod terminating", func() error {
		if err := checkEndpoints(ctx, cs, ns, "web",
			"[http/8080 metrics/9100] ready=web-1@10.0.0.11,web-3@10.0.0.13 notready="); err != nil {
			return err
		}
		return checkSlices(ctx, cs, svc,
			"[http/8080 metrics/9100] web-0@10.0.0.10:serving,terminating web-1@10.0.0.11:ready,serving web-3@10.0.0.13:ready,serving")
	})

	// Slices deleted or edited behind the controller's back come back.
	sl, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=web"})
	if err != nil || len(sl.Items) != 1 {
		t.Fatalf("slices: %v %d", err, len(sl.Items))
	}
	if err := cs.DiscoveryV1().EndpointSlices(ns).Delete(ctx, sl.Items[0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "web-0", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	wait(t, "a deleted slice replaced", func() error {
		return checkSlices(ctx, cs, svc, "[http/8080 metrics/9100] web-1@10.0.0.11:ready,serving web-3@10.0.0.13:ready,serving")
	})

	// Settled, the controllers write nothing more.
	before := versions(t, cs, ns)
	time.Sleep(time.Second) // a window for writes that should not happen
	if after := versions(t, cs, ns); after != before {
		t.Errorf("endpoints and slices rewritten with nothing changed: %s, then %s", before, after)
	}

	if _, err := cs.CoreV1().Endpoints(ns).Get(ctx, "manual", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("endpoints of a service without selector: %v, want none", err)
	}

	// The service goes: its Endpoints and (garbage-collected) slices too.
	if err := cs.CoreV1().Services(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wait(t, "endpoints and slices gone with the service", func() error {
		if _, err := cs.CoreV1().Endpoints(ns).Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("endpoints: %v", err)
		}
		l, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) > 0 {
			return fmt.Errorf("slices: %v, %d left", err, len(l.Items))
		}
		return nil
	})
}

// pod creates a pod bound to node-1 with labels "k=v" and one container
// port "name:number", then gives it ip (none when "") and readiness.
func pod(t *testing.T, cs kubernetes.Interface, ns, name, label, cport, ip string, ready bool) {
	t.Helper()
	k, v, _ := strings.Cut(label, "=")
	pname, num, _ := strings.Cut(cport, ":")
	var n int32
	fmt.Sscan(num, &n)
	_, err := cs.CoreV1().Pods(ns).Create(t.Context(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{k: v}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "c", Image: "nginx",
			Ports: []corev1.ContainerPort{{Name: pname, ContainerPort: n}}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ip != "" {
		setStatus(t, cs, ns, name, ip, ready)
	}
}

// setStatus is what a kubelet would report: Running, ip, Ready or not.
func setStatus(t *testing.T, cs kubernetes.Interface, ns, name, ip string, ready bool) {
	t.Helper()
	p, err := cs.CoreV1().Pods(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.PodIP, p.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Now()}}
	if _, err := cs.CoreV1().Pods(ns).UpdateStatus(t.Context(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// checkEndpoints compares the Endpoints with want: subsets separated by
// " | ", each "[ports] ready=pod@ip,... notready=...".
func checkEndpoints(ctx context.Context, cs kubernetes.Interface, ns, name, want string) error {
	ep, err := cs.CoreV1().Endpoints(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	var subsets []string
	for _, ss := range ep.Subsets {
		var ports []string
		for _, p := range ss.Ports {
			ports = append(ports, fmt.Sprintf("%s/%d", p.Name, p.Port))
		}
		addrs := func(as []corev1.EndpointAddress) string {
			var out []string
			for _, a := range as {
				if a.NodeName == nil || *a.NodeName != "node-1" || a.TargetRef == nil || a.TargetRef.Kind != "Pod" || a.TargetRef.UID == "" {
					out = append(out, "BAD:"+a.String())
					continue
				}
				out = append(out, a.TargetRef.Name+"@"+a.IP)
			}
			return strings.Join(out, ",")
		}
		subsets = append(subsets, fmt.Sprintf("[%s] ready=%s notready=%s", strings.Join(ports, " "), addrs(ss.Addresses), addrs(ss.NotReadyAddresses)))
	}
	if got := strings.Join(subsets, " | "); got != want {
		return fmt.Errorf("endpoints:\n got %s\nwant %s", got, want)
	}
	if ep.Labels["tier"] != "front" || ep.Labels["endpoints.kubernetes.io/managed-by"] != "endpoint-controller" {
		return fmt.Errorf("endpoints labels %v", ep.Labels)
	}
	return nil
}

// checkSlices compares the service's slices with want: one per port set,
// sorted, separated by " | ", each "[ports] pod@ip:conditions ...".
func checkSlices(ctx context.Context, cs kubernetes.Interface, svc *corev1.Service, want string) error {
	l, err := cs.DiscoveryV1().EndpointSlices(svc.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: "kubernetes.io/service-name=" + svc.Name})
	if err != nil {
		return err
	}
	var got []string
	for _, s := range l.Items {
		if s.Labels["endpointslice.kubernetes.io/managed-by"] != "endpointslice-controller.k8s.io" || s.Labels["tier"] != "front" ||
			s.AddressType != discoveryv1.AddressTypeIPv4 || !strings.HasPrefix(s.Name, svc.Name+"-") ||
			len(s.OwnerReferences) != 1 || s.OwnerReferences[0].UID != svc.UID || s.OwnerReferences[0].Controller == nil {
			return fmt.Errorf("slice %s: labels %v addressType %s owners %v", s.Name, s.Labels, s.AddressType, s.OwnerReferences)
		}
		var ports []string
		for _, p := range s.Ports {
			ports = append(ports, fmt.Sprintf("%s/%d", *p.Name, *p.Port))
		}
		slices.Sort(ports)
		desc := "[" + strings.Join(ports, " ") + "]"
		for _, e := range s.Endpoints {
			var conds []string
			for name, v := range map[string]*bool{"ready": e.Conditions.Ready, "serving": e.Conditions.Serving, "terminating": e.Conditions.Terminating} {
				if v != nil && *v {
					conds = append(conds, name)
				}
			}
			slices.Sort(conds)
			if e.NodeName == nil || *e.NodeName != "node-1" || e.TargetRef == nil || e.TargetRef.Kind != "Pod" {
				return fmt.Errorf("slice %s: endpoint %+v", s.Name, e)
			}
			desc += fmt.Sprintf(" %s@%s:%s", e.TargetRef.Name, strings.Join(e.Addresses, ","), strings.Join(conds, ","))
		}
		got = append(got, desc)
	}
	slices.Sort(got)
	if want == "" {
		want = "[]" // no endpoint: one empty slice
	}
	if g := strings.Join(got, " | "); g != want {
		return fmt.Errorf("slices:\n got %s\nwant %s", g, want)
	}
	return nil
}

// versions lists the resourceVersions of the namespace's Endpoints and
// slices.
func versions(t *testing.T, cs kubernetes.Interface, ns string) string {
	t.Helper()
	eps, err := cs.CoreV1().Endpoints(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sl, err := cs.DiscoveryV1().EndpointSlices(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range eps.Items {
		out = append(out, "endpoints/"+e.Name+"@"+e.ResourceVersion)
	}
	for _, s := range sl.Items {
		out = append(out, "slice/"+s.Name+"@"+s.ResourceVersion)
	}
	return strings.Join(out, " ")
}

func wait(t *testing.T, what string, f func() error) {
	t.Helper()
	membertest.Eventually(t, 15*time.Second, func() error {
		if err := f(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	})
}

// kubectl runs kubectl against the member (false when it is not on PATH).
func kubectl(t *testing.T, kubeconfig string, args ...string) (string, bool) {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Log("kubectl not on PATH: not checked")
		return "", false
	}
	out, err := exec.CommandContext(t.Context(), "kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
	if err != nil {
		t.Errorf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		return "", false
	}
	return string(out), true
}
