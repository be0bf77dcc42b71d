package deployment_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/controllers/deployment"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// TestDeploymentLeaderChange (issue 5, acceptance item 2): the leader
// stops while a 50-replica Deployment rolls out; the new leader, starting
// from fresh informers, finishes the rollout. At no time do more than
// replicas+maxSurge pods exist, and no template gets two ReplicaSets.
func TestDeploymentLeaderChange(t *testing.T) {
	c := membertest.StartCluster(t, 3)
	leader := c.WaitLeader()
	f := c.Follower()
	e := newEnv(t, c, f, "failover")
	e.create(t, newDeployment("web", 50, "nginx:1.28", rolling(5, 5)))
	e.waitRolledOut(t, "web", 60*time.Second)
	e.setImage(t, "web", "nginx:1.29")
	// Stop the leader halfway through the rollout.
	var updated int32
	membertest.Eventually(t, 30*time.Second, func() error {
		d, err := e.cs.AppsV1().Deployments(e.ns).Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Status.UpdatedReplicas < 10 || d.Status.ObservedGeneration != d.Generation {
			return fmt.Errorf("%d updated replicas", d.Status.UpdatedReplicas)
		}
		updated = d.Status.UpdatedReplicas
		return nil
	})
	c.Stop(leader)
	t.Logf("leader %d stopped at %d updated replicas of 50", leader, updated)
	if l := c.WaitLeader(); l == leader {
		t.Fatalf("member %d still leads", l)
	}
	d := e.waitRolledOut(t, "web", 60*time.Second)
	if got := e.maxLivePods("web-"); got > 55 {
		t.Errorf("%d pods at once, want at most replicas+maxSurge = 55", got)
	}
	created := e.rsCreated("web-")
	for hash, n := range created {
		if n != 1 {
			t.Errorf("template %s: %d replicasets created", hash, n)
		}
	}
	rss := e.replicaSets(t, d)
	if len(created) != 2 || len(rss) != 2 || rss["web-"+deployment.ComputeHash(&d.Spec.Template, nil)] == nil {
		t.Errorf("replicasets created %v, existing %v; want one per template", created, keys(rss))
	}
	var terms uint64
	for i := range c.N() {
		if m := c.Member(i); m != nil {
			terms += m.Controllers().Stats().Terms
		}
	}
	if terms == 0 {
		t.Error("no running member led a term")
	}
	c.SameObjects(t.Context(), "/apis/apps/v1/replicasets", "/api/v1/pods")
}
