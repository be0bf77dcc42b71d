package endpoints

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestFindPort(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{
			{Name: "init", Ports: []corev1.ContainerPort{{Name: "once", ContainerPort: 1}}},
			{Name: "sidecar", RestartPolicy: &always, Ports: []corev1.ContainerPort{{Name: "proxy", ContainerPort: 15001}}},
		},
		Containers: []corev1.Container{{Name: "app", Ports: []corev1.ContainerPort{
			{Name: "http", ContainerPort: 8080},
			{Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP},
		}}},
	}}
	for _, tc := range []struct {
		name   string
		sp     corev1.ServicePort
		want   int32
		wantOK bool
	}{
		{"number", corev1.ServicePort{Port: 80, TargetPort: intstr.FromInt32(9376)}, 9376, true},
		{"unset number is the port", corev1.ServicePort{Port: 80}, 80, true},
		{"name, protocol defaulted", corev1.ServicePort{Port: 80, TargetPort: intstr.FromString("http")}, 8080, true},
		{"name of another protocol", corev1.ServicePort{Port: 53, TargetPort: intstr.FromString("dns")}, 0, false},
		{"name and protocol", corev1.ServicePort{Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromString("dns")}, 53, true},
		{"sidecar", corev1.ServicePort{Port: 1, TargetPort: intstr.FromString("proxy")}, 15001, true},
		{"init container", corev1.ServicePort{Port: 1, TargetPort: intstr.FromString("once")}, 0, false},
		{"missing", corev1.ServicePort{Port: 1, TargetPort: intstr.FromString("nope")}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := findPort(pod, &tc.sp)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("findPort = %d, %v; want %d, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// endpointsOf: who is in, and with which conditions.
func TestEndpointsOf(t *testing.T) {
	now := metav1.Now()
	mk := func(name, ip string, ready bool, mod func(*corev1.Pod)) *corev1.Pod {
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: corev1.PodStatus{PodIP: ip, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}}}
		if mod != nil {
			mod(p)
		}
		return p
	}
	pods := []*corev1.Pod{
		mk("b-ready", "10.0.0.2", true, nil),
		mk("a-notready", "10.0.0.1", false, nil),
		mk("no-ip", "", true, nil),
		mk("v6", "fd00::1", true, nil),
		mk("done", "10.0.0.3", true, func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }),
		mk("leaving", "10.0.0.4", true, func(p *corev1.Pod) { p.DeletionTimestamp = &now }),
		mk("host", "10.0.0.5", true, func(p *corev1.Pod) { p.Spec.Hostname, p.Spec.Subdomain = "h", "svc" }),
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc"}}
	type want struct {
		name                        string
		ready, serving, terminating bool
		hostname                    string
	}
	check := func(t *testing.T, got []endpoint, ws []want) {
		t.Helper()
		if len(got) != len(ws) {
			t.Fatalf("%d endpoints, want %d: %+v", len(got), len(ws), got)
		}
		for i, w := range ws {
			g := got[i]
			if g.pod.Name != w.name || g.ready != w.ready || g.serving != w.serving || g.terminating != w.terminating || g.hostname != w.hostname {
				t.Errorf("endpoint %d: %s ready=%v serving=%v terminating=%v hostname=%q, want %+v",
					i, g.pod.Name, g.ready, g.serving, g.terminating, g.hostname, w)
			}
		}
	}
	t.Run("endpoints", func(t *testing.T) {
		check(t, endpointsOf(svc, pods, false), []want{
			{name: "a-notready"}, {name: "b-ready", ready: true, serving: true},
			{name: "host", ready: true, serving: true, hostname: "h"}})
	})
	t.Run("slices", func(t *testing.T) {
		check(t, endpointsOf(svc, pods, true), []want{
			{name: "a-notready"}, {name: "b-ready", ready: true, serving: true},
			{name: "host", ready: true, serving: true, hostname: "h"},
			{name: "leaving", serving: true, terminating: true}})
	})
	t.Run("publishNotReadyAddresses", func(t *testing.T) {
		pub := svc.DeepCopy()
		pub.Spec.PublishNotReadyAddresses = true
		check(t, endpointsOf(pub, pods, false), []want{
			{name: "a-notready", ready: true, serving: true}, {name: "b-ready", ready: true, serving: true},
			{name: "host", ready: true, serving: true, hostname: "h"},
			{name: "leaving", ready: true, serving: true, terminating: true}})
	})
}

// The tracker holds a service until the cache shows the controller's own
// writes, or until it gave up waiting.
func TestTracker(t *testing.T) {
	tr := newTracker(time.Hour)
	at := func(rv string) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}
	}
	cache := map[string]*discoveryv1.EndpointSlice{"s-1": at("5"), "s-2": at("6")}
	get := func(name string) *discoveryv1.EndpointSlice { return cache[name] }
	if stale, _ := tr.stale("ns/svc", get); stale {
		t.Fatal("stale with no write")
	}
	tr.wrote("ns/svc", "s-1", at("10"))
	tr.wrote("ns/svc", "s-2", nil)
	tr.wrote("ns/svc", "s-3", at("11"))
	if stale, wait := tr.stale("ns/svc", get); !stale || wait <= 0 {
		t.Fatalf("stale = %v, %v; want true, positive", stale, wait)
	}
	cache["s-1"] = at("12") // a later write than ours counts too
	delete(cache, "s-2")
	if stale, _ := tr.stale("ns/svc", get); !stale {
		t.Fatal("s-3 not in the cache yet, but not stale")
	}
	if stale, _ := tr.stale("ns/other", get); stale {
		t.Fatal("another service stale")
	}
	cache["s-3"] = at("11")
	if stale, _ := tr.stale("ns/svc", get); stale {
		t.Fatal("every write seen, still stale")
	}
	short := newTracker(time.Nanosecond)
	short.wrote("ns/svc", "never", at("1"))
	time.Sleep(time.Millisecond)
	if stale, _ := short.stale("ns/svc", get); stale {
		t.Fatal("stale after the timeout")
	}
}
