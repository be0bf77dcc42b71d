package deployment_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/litek8s/litek8s/internal/controllers/deployment"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// The Deployment controller (with the ReplicaSet controller) in a cluster
// of 3, driven through a follower with client-go and kubectl; the test
// is the kubelet.
func TestDeployment(t *testing.T) {
	c := membertest.StartCluster(t, 3)
	f := c.Follower()
	t.Run("available", func(t *testing.T) { testAvailable(t, newEnv(t, c, f, "available")) })
	t.Run("rolling update", func(t *testing.T) { testRolling(t, newEnv(t, c, f, "rolling")) })
	t.Run("recreate", func(t *testing.T) { testRecreate(t, newEnv(t, c, f, "recreate")) })
	t.Run("rollback and history", func(t *testing.T) { testRollback(t, newEnv(t, c, f, "rollback")) })
	t.Run("pause", func(t *testing.T) { testPause(t, newEnv(t, c, f, "pause")) })
	c.SameObjects(t.Context(), "/apis/apps/v1/deployments", "/apis/apps/v1/replicasets", "/api/v1/pods")
}

// testAvailable: a new Deployment gets one ReplicaSet named after its
// template's hash, revision 1, and becomes available.
func testAvailable(t *testing.T, e *env) {
	d := e.create(t, newDeployment("web", 3, "nginx:1.28", rolling(1, 0)))
	d = e.waitRolledOut(t, "web", 30*time.Second)
	hash := deployment.ComputeHash(&d.Spec.Template, nil)
	rss := e.replicaSets(t, d)
	rs, ok := rss["web-"+hash]
	if len(rss) != 1 || !ok {
		t.Fatalf("replicasets %v, want only web-%s", keys(rss), hash)
	}
	if rs.Spec.Selector.MatchLabels["pod-template-hash"] != hash || rs.Spec.Template.Labels["pod-template-hash"] != hash ||
		rs.Annotations["deployment.kubernetes.io/revision"] != "1" || d.Annotations["deployment.kubernetes.io/revision"] != "1" ||
		rs.Annotations["deployment.kubernetes.io/desired-replicas"] != "3" || rs.Annotations["deployment.kubernetes.io/max-replicas"] != "4" {
		t.Errorf("replicaset %s: selector %v, template labels %v, annotations %v; deployment annotations %v",
			rs.Name, rs.Spec.Selector, rs.Spec.Template.Labels, rs.Annotations, d.Annotations)
	}
	// Scaling is not a rollout: the same ReplicaSet grows.
	if _, err := e.cs.AppsV1().Deployments(e.ns).Patch(t.Context(), "web", types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	d = e.waitRolledOut(t, "web", 30*time.Second)
	if rss := e.replicaSets(t, d); len(rss) != 1 || *rss["web-"+hash].Spec.Replicas != 5 {
		t.Errorf("after scaling: replicasets %v", keys(rss))
	}
}

// testRolling: a template change rolls out within maxSurge and
// maxUnavailable, to revision 2, the old ReplicaSet kept at zero.
func testRolling(t *testing.T, e *env) {
	e.create(t, newDeployment("web", 6, "nginx:1.28", rolling(2, 1)))
	e.waitRolledOut(t, "web", 30*time.Second)
	e.setImage(t, "web", "nginx:1.29")
	d := e.waitRolledOut(t, "web", 60*time.Second)
	if got := e.maxLivePods("web-"); got > 8 {
		t.Errorf("%d pods at once, want at most replicas+maxSurge = 8", got)
	}
	rss := e.replicaSets(t, d)
	newRS := rss["web-"+deployment.ComputeHash(&d.Spec.Template, nil)]
	if len(rss) != 2 || newRS == nil || newRS.Annotations["deployment.kubernetes.io/revision"] != "2" || *newRS.Spec.Replicas != 6 {
		t.Fatalf("replicasets %v, want the old one and the new one at revision 2", keys(rss))
	}
	for name, rs := range rss {
		if rs != newRS && (*rs.Spec.Replicas != 0 || rs.Status.Replicas != 0) {
			t.Errorf("old replicaset %s has %d replicas", name, *rs.Spec.Replicas)
		}
	}
	if d.Annotations["deployment.kubernetes.io/revision"] != "2" {
		t.Errorf("deployment revision %q, want 2", d.Annotations["deployment.kubernetes.io/revision"])
	}
}

// testRecreate: every old pod is gone before the first new one is created.
func testRecreate(t *testing.T, e *env) {
	e.create(t, newDeployment("db", 3, "postgres:16", appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}))
	d := e.waitRolledOut(t, "db", 30*time.Second)
	oldHash := deployment.ComputeHash(&d.Spec.Template, nil)
	e.setImage(t, "db", "postgres:17")
	d = e.waitRolledOut(t, "db", 30*time.Second)
	newHash := deployment.ComputeHash(&d.Spec.Template, nil)
	if got := e.maxLivePods("db-"); got > 3 {
		t.Errorf("%d pods at once, want at most 3", got)
	}
	// No pod of the new template while one of the old exists.
	live := map[string]bool{}
	for _, ev := range e.rec.Events() {
		p, ok := ev.Object.(interface{ GetName() string })
		if !ok || !strings.HasPrefix(p.GetName(), "db-"+oldHash+"-") && !strings.HasPrefix(p.GetName(), "db-"+newHash+"-") {
			continue
		}
		name := p.GetName()
		if _, isRS := ev.Object.(*appsv1.ReplicaSet); isRS {
			continue
		}
		if ev.Type == "DELETED" {
			delete(live, name)
			continue
		}
		live[name] = true
		if strings.HasPrefix(name, "db-"+newHash+"-") {
			for other := range live {
				if strings.HasPrefix(other, "db-"+oldHash+"-") {
					t.Fatalf("new pod %s created while old pod %s exists", name, other)
				}
			}
		}
	}
}

// testRollback: kubectl rollout undo brings revision 1's template back by
// reusing its ReplicaSet, which becomes revision 3; kubectl rollout
// history and status work.
func testRollback(t *testing.T, e *env) {
	d := newDeployment("api", 4, "api:v1", rolling(1, 1))
	d.Annotations = map[string]string{"kubernetes.io/change-cause": "v1"}
	e.create(t, d)
	d = e.waitRolledOut(t, "api", 30*time.Second)
	v1 := "api-" + deployment.ComputeHash(&d.Spec.Template, nil)
	// One write, as kubectl set image --record did: an annotation written
	// alone is copied to the current ReplicaSet.
	e.kubectl(t, "patch", "deployment/api", "-p",
		`{"metadata":{"annotations":{"kubernetes.io/change-cause":"v2"}},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"api:v2"}]}}}}`)
	e.waitRolledOut(t, "api", 30*time.Second)
	out := e.kubectl(t, "rollout", "history", "deployment/api")
	if !strings.Contains(out, "1         v1") || !strings.Contains(out, "2         v2") {
		t.Errorf("kubectl rollout history:\n%s", out)
	}
	e.kubectl(t, "rollout", "undo", "deployment/api", "--to-revision=1")
	if out := e.kubectl(t, "rollout", "status", "deployment/api", "--timeout=30s"); !strings.Contains(out, "successfully rolled out") {
		t.Errorf("kubectl rollout status: %s", out)
	}
	d = e.waitRolledOut(t, "api", 30*time.Second)
	rss := e.replicaSets(t, d)
	rs := rss[v1]
	if len(rss) != 2 || rs == nil || *rs.Spec.Replicas != 4 || d.Spec.Template.Spec.Containers[0].Image != "api:v1" {
		t.Fatalf("after undo: replicasets %v, image %s; want %s back at 4", keys(rss), d.Spec.Template.Spec.Containers[0].Image, v1)
	}
	if rs.Annotations["deployment.kubernetes.io/revision"] != "3" || rs.Annotations["deployment.kubernetes.io/revision-history"] != "1" ||
		d.Annotations["deployment.kubernetes.io/revision"] != "3" {
		t.Errorf("after undo: replicaset annotations %v, deployment annotations %v", rs.Annotations, d.Annotations)
	}
}

// testPause: a paused Deployment takes template changes without rolling
// them out; resumed, it rolls out.
func testPause(t *testing.T, e *env) {
	e.create(t, newDeployment("batch", 2, "worker:v1", rolling(1, 0)))
	d := e.waitRolledOut(t, "batch", 30*time.Second)
	e.kubectl(t, "rollout", "pause", "deployment/batch")
	e.setImage(t, "batch", "worker:v2")
	membertest.Eventually(t, 10*time.Second, func() error {
		d, err := e.cs.AppsV1().Deployments(e.ns).Get(t.Context(), "batch", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c := cond(d, appsv1.DeploymentProgressing); d.Status.ObservedGeneration != d.Generation || c == nil || c.Reason != "DeploymentPaused" {
			return fmt.Errorf("paused deployment not observed: generation %d/%d, progressing %+v", d.Status.ObservedGeneration, d.Generation, c)
		}
		return nil
	})
	time.Sleep(300 * time.Millisecond) // what the controller would do, it did by now
	if rss := e.replicaSets(t, d); len(rss) != 1 {
		t.Fatalf("paused deployment has replicasets %v, want 1", keys(rss))
	}
	e.kubectl(t, "rollout", "resume", "deployment/batch")
	d = e.waitRolledOut(t, "batch", 30*time.Second)
	if rss := e.replicaSets(t, d); len(rss) != 2 || d.Spec.Template.Spec.Containers[0].Image != "worker:v2" {
		t.Errorf("resumed: replicasets %v", keys(rss))
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
