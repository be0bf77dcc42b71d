package podlabel_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/member/membertest"
	"github.com/litek8s/litek8s/internal/podlabel"
)

// The members of a 3-member cluster label their Pods (stored, for the
// test, in litek8s itself: a real Kubernetes API): exactly the leader's
// says true, and the label follows a leadership transfer.
func TestLabelFollowsLeadership(t *testing.T) {
	c := membertest.StartCluster(t, 3)
	cs := c.Clientset(0)
	ctx := t.Context()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "litek8s"}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, c.N())
	for i := range c.N() {
		ids[i] = c.Member(i).Store().ID()
		if _, err := cs.CoreV1().Pods("litek8s").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: ids[i]},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "node", Image: "litek8s"}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := range c.N() {
		cfg := podlabel.Config{Namespace: "litek8s", Name: ids[i], Key: podlabel.DefaultKey, Client: cs,
			Retry: 50 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		wg.Go(func() {
			if err := podlabel.Run(rctx, cfg, c.Member(i).Store().RunAsLeader); err != nil {
				t.Error(err)
			}
		})
	}
	labels := func() map[string]string {
		out := map[string]string{}
		l, err := cs.CoreV1().Pods("litek8s").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range l.Items {
			out[p.Name] = p.Labels[podlabel.DefaultKey]
		}
		return out
	}
	onlyLeader := func(leader string) func() error {
		return func() error {
			for name, v := range labels() {
				if want := fmt.Sprint(name == leader); v != want {
					return fmt.Errorf("pod %s labelled %q, want %q (leader %s)", name, v, want, leader)
				}
			}
			return nil
		}
	}
	first := ids[c.WaitLeader()]
	membertest.Eventually(t, 10*time.Second, onlyLeader(first))

	next, err := c.Member(c.WaitLeader()).Store().TransferLeadership(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if next == first {
		t.Fatalf("leadership stayed on %s", first)
	}
	membertest.Eventually(t, 10*time.Second, onlyLeader(next))

	stop()
	wg.Wait()
	for name, v := range labels() {
		if v != "false" {
			t.Errorf("after Run ended, pod %s is labelled %q", name, v)
		}
	}
}
