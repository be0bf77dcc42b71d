package scheduler_test

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// envInt reads a positive integer from the environment, else def.
func envInt(t *testing.T, name string, def int) int {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("%s=%q: want a positive integer", name, v)
		}
		return n
	}
	return def
}

// TestSchedulingThroughput creates many pods of one owner on many
// simulated nodes (one member) and logs how long they take to be bound
// and to run. The defaults keep it short under -race; the scale
// is
//
//	LITEK8S_SCHED_NODES=1000 LITEK8S_SCHED_PODS=10000 go test -run TestSchedulingThroughput -v ./internal/controllers/scheduler/
func TestSchedulingThroughput(t *testing.T) {
	nodes := envInt(t, "LITEK8S_SCHED_NODES", 200)
	pods := envInt(t, "LITEK8S_SCHED_PODS", 2000)
	c := membertest.StartCluster(t, 1, func(cfg *member.Config) {
		cfg.Controllers.Scheduling.SimNodes.Count = nodes
		cfg.Store.FeedSize = max(cfg.Store.FeedSize, 4*pods) // informers keep up without relisting
	})
	cs := c.Clientset(0)
	const ns = "default"
	membertest.Eventually(t, time.Duration(nodes)*100*time.Millisecond+30*time.Second, func() error {
		l, err := cs.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{LabelSelector: "type=simulated"})
		if err != nil {
			return err
		}
		ready := 0
		for _, n := range l.Items {
			if len(n.Spec.Taints) == 0 {
				ready++
			}
		}
		if ready != nodes {
			return fmt.Errorf("%d of %d simulated nodes schedulable", ready, nodes)
		}
		return nil
	})
	owner, err := cs.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "many"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(pods); i = next.Add(1) - 1 {
				p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("many-%d", i),
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name,
						UID: owner.UID, Controller: &yes}}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
				if _, err := cs.CoreV1().Pods(ns).Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	created := time.Since(start)
	var bound, running time.Duration
	perNode := map[string]int{}
	membertest.Eventually(t, 5*time.Minute, func() error {
		l, err := cs.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		nb, nr := 0, 0
		clear(perNode)
		for _, p := range l.Items {
			if p.Spec.NodeName != "" {
				nb++
				perNode[p.Spec.NodeName]++
			}
			if p.Status.Phase == corev1.PodRunning {
				nr++
			}
		}
		if nb == pods && bound == 0 {
			bound = time.Since(start)
		}
		if nr != pods {
			return fmt.Errorf("%d bound, %d running of %d", nb, nr, pods)
		}
		running = time.Since(start)
		return nil
	})
	t.Logf("%d pods on %d simulated nodes: created in %v, all bound after %v (%.0f pods/s), all running after %v",
		pods, nodes, created.Round(time.Millisecond), bound.Round(time.Millisecond),
		float64(pods)/bound.Seconds(), running.Round(time.Millisecond))
	lo, hi := pods, 0
	for _, n := range perNode {
		lo, hi = min(lo, n), max(hi, n)
	}
	if len(perNode) != nodes || hi-lo > 1 {
		t.Errorf("pods per node between %d and %d on %d nodes, want an even spread over %d", lo, hi, len(perNode), nodes)
	}
}
