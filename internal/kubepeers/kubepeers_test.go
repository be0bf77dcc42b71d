package kubepeers

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestPodOf(t *testing.T) {
	d := &Dialer{Domain: "db-peers.ns.svc.cluster.local"}
	for host, want := range map[string]string{
		"db-0.db-peers.ns.svc.cluster.local":  "db-0",
		"db-1.db-peers.ns.svc.cluster.local.": "db-1",
		"db-peers.ns.svc.cluster.local":       "",
		"a.b.db-peers.ns.svc.cluster.local":   "",
		"db-0.other.ns.svc.cluster.local":     "",
		"10.0.0.1":                            "",
	} {
		got, ok := d.PodOf(host)
		if got != want || ok != (want != "") {
			t.Errorf("PodOf(%q) = %q, %v; want %q", host, got, ok, want)
		}
	}
}

// A peer's name is dialed at its Pod's IP (a real listener on loopback);
// a Pod without an IP or that does not exist is ErrNoPodIP; once the API
// refuses, names go through DNS.
func TestDialThroughPod(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hi"))
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	cs := fake.NewClientset(
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db-0"}, Status: corev1.PodStatus{PodIP: "127.0.0.1"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db-1"}})
	d := &Dialer{Client: cs, Namespace: "ns", Domain: "db-peers.ns.svc.cluster.local", Net: &net.Dialer{Timeout: time.Second},
		Logger: discard}
	ctx := t.Context()
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort("db-0.db-peers.ns.svc.cluster.local", port))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(c)
	c.Close()
	if string(b) != "hi" {
		t.Fatalf("read %q through the Pod's IP", b)
	}
	for _, pod := range []string{"db-1", "db-2"} {
		if _, err := d.DialContext(ctx, "tcp", net.JoinHostPort(pod+".db-peers.ns.svc.cluster.local", port)); !errors.Is(err, ErrNoPodIP) {
			t.Errorf("%s: err = %v, want ErrNoPodIP", pod, err)
		}
	}
	// a name outside the domain is dialed as it is
	c, err = d.DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()

	cs.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errForbidden()
	})
	if _, err := d.DialContext(ctx, "tcp", net.JoinHostPort("db-0.db-peers.ns.svc.cluster.local", port)); err == nil ||
		errors.Is(err, ErrNoPodIP) || !d.dnsFallback.Load() {
		t.Errorf("after a 403: err = %v, DNS fallback %v; want a DNS error (the name does not resolve here)", err, d.dnsFallback.Load())
	}
}

type fakeMembers struct {
	ids     []string
	removed []string
}

func (f *fakeMembers) MemberIDs() ([]string, error) { return f.ids, nil }
func (f *fakeMembers) RemoveMember(_ context.Context, id string) error {
	f.removed = append(f.removed, id)
	return nil
}

func TestPrune(t *testing.T) {
	three := int32(3)
	cs := fake.NewClientset(&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db"},
		Spec: appsv1.StatefulSetSpec{Replicas: &three}})
	for _, tc := range []struct {
		self    string
		ids     []string
		removed []string
	}{
		{"db-0", []string{"db-0", "db-1", "db-2"}, nil},
		{"db-0", []string{"db-0", "db-1", "db-2", "db-3", "db-4"}, []string{"db-3", "db-4"}},
		{"db-4", []string{"db-0", "db-1", "db-2", "db-3", "db-4"}, []string{"db-3"}}, // never itself
		{"db-0", []string{"db-0", "db-07", "dbx-9", "other", "db-"}, nil},            // not the StatefulSet's
	} {
		m := &fakeMembers{ids: tc.ids}
		p := &Pruner{Client: cs, Namespace: "ns", StatefulSet: "db", Self: tc.self, Members: m, Interval: time.Second,
			Logger: discard}
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		if err := p.Prune(t.Context()); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(m.removed, tc.removed) {
			t.Errorf("self %s, members %v: removed %v, want %v", tc.self, tc.ids, m.removed, tc.removed)
		}
	}
	p := &Pruner{Client: cs, Namespace: "ns", StatefulSet: "gone", Self: "gone-0", Members: &fakeMembers{}, Interval: time.Second,
		Logger: discard}
	if err := p.Prune(t.Context()); err == nil {
		t.Error("Prune without its StatefulSet: no error")
	}
}

func TestStatefulSetOf(t *testing.T) {
	for pod, want := range map[string]string{"litek8s-0": "litek8s", "my-db-12": "my-db", "x": "", "db-": "", "db-01": ""} {
		got, ok := StatefulSetOf(pod)
		if got != want && !(want == "" && !ok) {
			t.Errorf("StatefulSetOf(%q) = %q, %v; want %q", pod, got, ok, want)
		}
	}
}

func errForbidden() error {
	return apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "db-0", errors.New("no RBAC"))
}
