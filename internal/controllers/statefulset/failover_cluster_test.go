package statefulset_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// TestStatefulSetLeaderChange: the leader stops while an OrderedReady set
// scales up; the new leader, from fresh informers, finishes: each pod
// still waits for its predecessor, and the template keeps one revision.
func TestStatefulSetLeaderChange(t *testing.T) {
	c := membertest.StartCluster(t, 3, simulated)
	leader := c.WaitLeader()
	e := newEnv(t, c, c.Follower(), "failover")
	e.create(t, statefulSet("web", 10, appsv1.OrderedReadyPodManagement))
	var ready int32
	membertest.Eventually(t, 30*time.Second, func() error {
		s, err := e.cs.AppsV1().StatefulSets(e.ns).Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ready = s.Status.ReadyReplicas; ready < 3 {
			return fmt.Errorf("%d ready", ready)
		}
		return nil
	})
	c.Stop(leader)
	t.Logf("leader %d stopped at %d ready pods of 10", leader, ready)
	if l := c.WaitLeader(); l == leader {
		t.Fatalf("member %d still leads", l)
	}
	set, _ := e.waitRolledOut(t, "web", 10)
	ev := e.podEvents("web-")
	for i := 1; i < 10; i++ {
		if !before(ev, fmt.Sprintf("READY web-%d", i-1), fmt.Sprintf("ADDED web-%d", i)) {
			t.Errorf("web-%d created before web-%d was ready: %v", i, i-1, ev)
		}
	}
	if n := strings.Count(strings.Join(ev, ","), "ADDED"); n != 10 {
		t.Errorf("%d pods created, want 10: %v", n, ev)
	}
	revs, err := e.cs.AppsV1().ControllerRevisions(e.ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(revs.Items) != 1 || revs.Items[0].Name != set.Status.UpdateRevision {
		t.Errorf("%d revisions, want one: %s", len(revs.Items), set.Status.UpdateRevision)
	}
	c.SameObjects(t.Context(), "/api/v1/namespaces/failover/pods", "/api/v1/namespaces/failover/persistentvolumeclaims",
		"/apis/apps/v1/namespaces/failover/controllerrevisions")
}
