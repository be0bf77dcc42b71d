package controllers_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/litek8s/litek8s/internal/controllers"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// notRootCA leaves out the kube-root-ca.crt that the root CA publisher
// puts in every namespace: not part of the cascades.
const notRootCA = "metadata.name!=kube-root-ca.crt"

// deletesOf returns each running member's garbage collector deletions.
func deletesOf(c *membertest.Cluster) map[int]uint64 {
	out := make(map[int]uint64)
	for i := range c.N() {
		if m := c.Member(i); m != nil {
			out[i] = m.Controllers().Stats().GCDeletes
		}
	}
	return out
}

// stopLeader stops the leader and returns its index and the deletions its
// garbage collector made since before.
// It never stops member keep (the one the test talks to): if keep leads, leadership moves first.
func stopLeader(t *testing.T, c *membertest.Cluster, before map[int]uint64, keep int) (int, uint64) {
	t.Helper()
	l := c.WaitLeader()
	if l == keep { // an election under load made the test's member the leader: move it away
		to := fmt.Sprintf("m%d", (keep+1)%c.N())
		if _, err := c.Member(l).Store().TransferLeadership(t.Context(), to); err != nil {
			t.Fatalf("transfer leadership from the test's member m%d to %s: %v", l, to, err)
		}
		if l = c.WaitLeader(); l == keep {
			t.Fatalf("m%d still leads after a transfer to %s", l, to)
		}
	}
	m := c.Member(l)
	c.Stop(l)
	// Until the others know the new leader, their consistent reads fail.
	c.WaitLeader()
	for i := range c.N() {
		if c.Member(i) == nil {
			continue
		}
		membertest.Eventually(t, 10*time.Second, func() error {
			_, err := c.Clientset(i).CoreV1().Namespaces().Get(t.Context(), "default", metav1.GetOptions{})
			return err
		})
	}
	return l, m.Controllers().Stats().GCDeletes - before[l]
}

// deletesSince sums the deletions of the running members since before.
func deletesSince(c *membertest.Cluster, before map[int]uint64) uint64 {
	var n uint64
	for i, d := range deletesOf(c) {
		n += d - before[i]
	}
	return n
}

// TestGarbageCollectorLeaderChange stops the leader in the middle of
// cascades: the new leader finishes them, and deletes nothing twice.
func TestGarbageCollectorLeaderChange(t *testing.T) {
	c := membertest.StartCluster(t, 3)
	// follower returns a fixture on a member that does not lead (the
	// tests' clients and watches must stay up when the leader stops).
	// follower returns a fixture on a member that is not leading now, and
	// that member's index (stopLeader keeps it running).
	follower := func(t *testing.T) (*fixture, int) {
		i := (c.WaitLeader() + 1) % 3
		return newFixtureOn(t, c, i), i
	}

	t.Run("foreground waiting for finalizers", func(t *testing.T) {
		f, fi := follower(t)
		ns := f.namespace(t, "gc-lc-fg")
		rec := f.record(t, ns, configmapsGVR)
		before := deletesOf(c)
		owner := f.configMap(t, ns, "owner")
		const held, free = 5, 20
		for i := range held {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("held-%d", i),
				Finalizers: []string{"gc.example.com/hold"}, OwnerReferences: []metav1.OwnerReference{cmRef(owner)}}}
			if _, err := f.cs.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range free {
			f.configMap(t, ns, fmt.Sprintf("free-%d", i), cmRef(owner))
		}
		fg := metav1.DeletePropagationForeground
		if err := f.cs.CoreV1().ConfigMaps(ns).Delete(t.Context(), "owner", metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
			t.Fatal(err)
		}
		// The leader's collector deletes the free dependents and marks the
		// held ones; the owner waits for them.
		membertest.Eventually(t, 20*time.Second, func() error {
			l, err := f.cs.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{FieldSelector: notRootCA})
			if err != nil {
				return err
			}
			var names []string
			for _, cm := range l.Items {
				if cm.DeletionTimestamp == nil {
					names = append(names, cm.Name)
				}
			}
			if len(l.Items) != held+1 || len(names) != 0 {
				return fmt.Errorf("%d configmaps left, not being deleted: %v", len(l.Items), names)
			}
			return nil
		})
		old, oldDeletes := stopLeader(t, c, before, fi)
		defer c.Restart(old)
		membertest.MustStay(t, "owner (waits for the held dependents)", f.getCM(ns, "owner"))

		// Their finalizers gone, the held dependents go; the new leader's
		// collector sees it and lets the owner go.
		for i := range held {
			if _, err := f.cs.CoreV1().ConfigMaps(ns).Patch(t.Context(), fmt.Sprintf("held-%d", i), types.JSONPatchType,
				[]byte(`[{"op":"remove","path":"/metadata/finalizers"}]`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		waitGone(t, "owner", f.getCM(ns, "owner"))
		evs := rec.sorted()
		for i := range held {
			deletedAt(t, evs, "ConfigMap", fmt.Sprintf("held-%d", i))
		}
		for i := range free {
			deletedAt(t, evs, "ConfigMap", fmt.Sprintf("free-%d", i))
		}
		if got := oldDeletes + deletesSince(c, before); got != held+free {
			t.Errorf("DELETE calls of the garbage collectors: %d (old leader %d), want %d", got, oldDeletes, held+free)
		}
	})

	t.Run("background in flight", func(t *testing.T) {
		f, fi := follower(t)
		ns := f.namespace(t, "gc-lc-bg")
		rec := f.record(t, ns, configmapsGVR)
		owner := f.configMap(t, ns, "owner")
		const n = 400
		for i := range n {
			f.configMap(t, ns, fmt.Sprintf("dep-%d", i), cmRef(owner))
		}
		left := func() int {
			l, err := f.cs.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{ResourceVersion: "0", FieldSelector: notRootCA})
			if err != nil {
				t.Fatal(err)
			}
			return len(l.Items)
		}
		before := deletesOf(c)
		if err := f.cs.CoreV1().ConfigMaps(ns).Delete(t.Context(), "owner", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		membertest.Eventually(t, 20*time.Second, func() error {
			if k := left(); k >= n {
				return fmt.Errorf("%d configmaps left: the cascade has not started", k)
			}
			return nil
		})
		l, stopped := stopLeader(t, c, before, fi)
		defer c.Restart(l)
		t.Logf("leader %d stopped with %d of %d dependents left", l, left(), n)
		membertest.Eventually(t, 30*time.Second, func() error {
			if k := left(); k != 0 {
				return fmt.Errorf("%d dependents left", k)
			}
			return nil
		})
		membertest.Eventually(t, 10*time.Second, func() error {
			evs := rec.sorted()
			for i := range n {
				if deletedAt(t, evs, "ConfigMap", fmt.Sprintf("dep-%d", i)) == 0 {
					return fmt.Errorf("no DELETED event for dep-%d yet", i)
				}
			}
			return nil
		})
		// Every DELETE that succeeded removed an object: at most n. One in
		// flight when the leader stopped may have been applied without its
		// answer being counted.
		got := stopped + deletesSince(c, before)
		if got > n || got < n-uint64(controllers.DefaultConfig().GCWorkers) {
			t.Errorf("DELETE calls of the garbage collectors: %d (old leader %d), want %d", got, stopped, n)
		}
	})
	c.SameObjects(t.Context(), "/api/v1/configmaps")
	newFixtureOn(t, c, 0).noResyncs(t)
}
