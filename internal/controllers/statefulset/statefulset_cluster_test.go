package statefulset_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// The StatefulSet controller in a cluster of 3 with simulated nodes,
// driven through a follower with client-go and kubectl.
func TestStatefulSet(t *testing.T) {
	c := membertest.StartCluster(t, 3, simulated)
	f := c.Follower()
	ordered := newEnv(t, c, f, "ordered")
	parallel := newEnv(t, c, f, "parallel")
	t.Run("ordered ready", func(t *testing.T) { testOrderedReady(t, ordered) })
	t.Run("parallel with claims deleted", func(t *testing.T) { testParallelDelete(t, parallel) })
	c.SameObjects(t.Context(), "/api/v1/namespaces/ordered/pods", "/api/v1/namespaces/ordered/persistentvolumeclaims",
		"/apis/apps/v1/namespaces/ordered/controllerrevisions", "/apis/apps/v1/namespaces/ordered/statefulsets",
		"/api/v1/namespaces/parallel/pods", "/api/v1/namespaces/parallel/persistentvolumeclaims")
}

// testOrderedReady: pods and claims with their identity, one at a time;
// scaling with kubectl; a rolling update from the highest ordinal;
// deleted and failed pods come back under their name; a terminating pod
// is waited for.
func testOrderedReady(t *testing.T, e *env) {
	e.create(t, statefulSet("web", 3, appsv1.OrderedReadyPodManagement))
	set, pods := e.waitRolledOut(t, "web", 3)
	rev := set.Status.UpdateRevision
	for i, p := range pods {
		ref := metav1.GetControllerOf(&p)
		vol := p.Spec.Volumes[0]
		if p.Spec.Hostname != p.Name || p.Spec.Subdomain != "web-headless" || p.Labels["app"] != "web" ||
			p.Labels[appsv1.StatefulSetPodNameLabel] != p.Name || p.Labels[appsv1.PodIndexLabel] != fmt.Sprint(i) ||
			p.Labels[appsv1.StatefulSetRevisionLabel] != rev || ref == nil || ref.Kind != "StatefulSet" || ref.UID != set.UID ||
			vol.Name != "data" || vol.PersistentVolumeClaim == nil || vol.PersistentVolumeClaim.ClaimName != fmt.Sprintf("data-web-%d", i) {
			t.Errorf("pod %s: hostname %q subdomain %q labels %v controller %+v volumes %+v", p.Name, p.Spec.Hostname,
				p.Spec.Subdomain, p.Labels, ref, p.Spec.Volumes)
		}
	}
	claim, err := e.cs.CoreV1().PersistentVolumeClaims(e.ns).Get(t.Context(), "data-web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if claim.Labels["app"] != "web" || len(claim.OwnerReferences) != 0 { // Retain/Retain: nobody owns it
		t.Errorf("claim data-web-1: labels %v owners %v", claim.Labels, claim.OwnerReferences)
	}
	cr, err := e.cs.AppsV1().ControllerRevisions(e.ns).Get(t.Context(), rev, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(cr); cr.Revision != 1 || ref == nil || ref.UID != set.UID ||
		!strings.HasPrefix(string(cr.Data.Raw), `{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"web"}}`) {
		t.Errorf("revision %s: number %d, owner %v, data %s", cr.Name, cr.Revision, ref, cr.Data.Raw)
	}
	// One at a time: each pod was created once, after its predecessor
	// was ready.
	ev := e.podEvents("web-")
	for i := 1; i < 3; i++ {
		if !before(ev, fmt.Sprintf("READY web-%d", i-1), fmt.Sprintf("ADDED web-%d", i)) {
			t.Errorf("web-%d created before web-%d was ready: %v", i, i-1, ev)
		}
	}
	if n := len(slices.DeleteFunc(slices.Clone(ev), func(s string) bool { return !strings.HasPrefix(s, "ADDED") })); n != 3 {
		t.Errorf("%d pods created, want 3: %v", n, ev)
	}
	if out := e.kubectl(t, "rollout", "status", "statefulset/web", "--timeout=20s"); !strings.Contains(out, "complete") {
		t.Errorf("kubectl rollout status: %s", out)
	}

	t.Run("scale", func(t *testing.T) {
		e.kubectl(t, "scale", "statefulset/web", "--replicas=5")
		e.waitRolledOut(t, "web", 5)
		e.kubectl(t, "scale", "statefulset/web", "--replicas=2")
		e.waitRolledOut(t, "web", 2)
		ev := e.podEvents("web-")
		// Down from the highest ordinal, each gone before the next goes.
		if !before(ev, "DELETED web-4", "DELETING web-3") || !before(ev, "DELETED web-3", "DELETING web-2") {
			t.Errorf("scale down out of order: %v", ev)
		}
		if got := e.claimNames(t); !slices.Equal(got, []string{"data-web-0", "data-web-1", "data-web-2", "data-web-3", "data-web-4"}) {
			t.Errorf("claims %v: Retain keeps all five", got)
		}
	})

	t.Run("rolling update", func(t *testing.T) {
		e.patch(t, "web", `{"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"c","image":"busybox:2"}]}}}}`)
		out := e.kubectl(t, "rollout", "status", "statefulset/web", "--timeout=30s")
		set, pods := e.waitRolledOut(t, "web", 3)
		if set.Status.UpdateRevision == rev || set.Status.CurrentRevision != set.Status.UpdateRevision {
			t.Errorf("revisions: current %s update %s (first %s)", set.Status.CurrentRevision, set.Status.UpdateRevision, rev)
		}
		for _, p := range pods {
			if p.Spec.Containers[0].Image != "busybox:2" || p.Labels[appsv1.StatefulSetRevisionLabel] != set.Status.UpdateRevision {
				t.Errorf("pod %s: image %s revision %s", p.Name, p.Spec.Containers[0].Image, p.Labels[appsv1.StatefulSetRevisionLabel])
			}
		}
		if !strings.Contains(out, "complete") {
			t.Errorf("kubectl rollout status: %s", out)
		}
		ev := e.podEvents("web-")
		if !before(ev, "DELETED web-1", "DELETING web-0") {
			t.Errorf("rolling update not from the highest ordinal: %v", ev)
		}
		cr, err := e.cs.AppsV1().ControllerRevisions(e.ns).Get(t.Context(), set.Status.UpdateRevision, metav1.GetOptions{})
		if err != nil || cr.Revision != 2 {
			t.Errorf("update revision %v: %v", cr, err)
		}
		// Back to the first template: the first revision is reused, renumbered.
		e.patch(t, "web", `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox:1"}]}}}}`)
		membertest.Eventually(t, 30*time.Second, func() error {
			s, err := e.cs.AppsV1().StatefulSets(e.ns).Get(t.Context(), "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if s.Status.UpdateRevision != rev {
				return fmt.Errorf("update revision %s, want %s", s.Status.UpdateRevision, rev)
			}
			return rolledOut(s)
		})
		cr, err = e.cs.AppsV1().ControllerRevisions(e.ns).Get(t.Context(), rev, metav1.GetOptions{})
		if err != nil || cr.Revision != 3 {
			t.Errorf("rolled-back revision %v: %v", cr, err)
		}
		// kubectl reads the revisions and applies one's data as kube's.
		if out := e.kubectl(t, "rollout", "history", "statefulset/web"); !strings.Contains(out, "2 ") || !strings.Contains(out, "3 ") {
			t.Errorf("kubectl rollout history:\n%s", out)
		}
		e.kubectl(t, "rollout", "undo", "statefulset/web")
		membertest.Eventually(t, 30*time.Second, func() error {
			s, err := e.cs.AppsV1().StatefulSets(e.ns).Get(t.Context(), "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if img := s.Spec.Template.Spec.Containers[0].Image; img != "busybox:2" {
				return fmt.Errorf("image %s after undo, want busybox:2", img)
			}
			return rolledOut(s)
		})
	})

	t.Run("partition and OnDelete", func(t *testing.T) {
		e.patch(t, "web", `{"spec":{"updateStrategy":{"rollingUpdate":{"partition":2}},"template":{"spec":{"containers":[{"name":"c","image":"busybox:3"}]}}}}`)
		images := func() (out []string) {
			_, pods := e.waitRolledOut(t, "web", 3)
			for _, p := range pods {
				out = append(out, p.Spec.Containers[0].Image)
			}
			return out
		}
		membertest.Eventually(t, 20*time.Second, func() error {
			if got := images(); !slices.Equal(got, []string{"busybox:2", "busybox:2", "busybox:3"}) {
				return fmt.Errorf("images %v, want only web-2 updated", got)
			}
			return nil
		})
		e.patch(t, "web", `{"spec":{"updateStrategy":{"type":"OnDelete","rollingUpdate":null},"template":{"spec":{"containers":[{"name":"c","image":"busybox:4"}]}}}}`)
		time.Sleep(500 * time.Millisecond) // OnDelete: nothing changes by itself
		if got := images(); !slices.Equal(got, []string{"busybox:2", "busybox:2", "busybox:3"}) {
			t.Errorf("images %v changed under OnDelete", got)
		}
		if err := e.cs.CoreV1().Pods(e.ns).Delete(t.Context(), "web-0", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		membertest.Eventually(t, 20*time.Second, func() error {
			if got := images(); !slices.Equal(got, []string{"busybox:4", "busybox:2", "busybox:3"}) {
				return fmt.Errorf("images %v, want web-0 recreated at busybox:4", got)
			}
			return nil
		})
		e.patch(t, "web", `{"spec":{"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":0}}}}`)
		membertest.Eventually(t, 20*time.Second, func() error {
			if got := images(); !slices.Equal(got, []string{"busybox:4", "busybox:4", "busybox:4"}) {
				return fmt.Errorf("images %v, want all busybox:4", got)
			}
			return nil
		})
	})

	t.Run("replace deleted and failed pods", func(t *testing.T) {
		_, pods := e.waitRolledOut(t, "web", 3)
		if err := e.cs.CoreV1().Pods(e.ns).Delete(t.Context(), "web-0", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		failed := pods[2].DeepCopy()
		failed.Status.Phase = corev1.PodFailed
		if _, err := e.cs.CoreV1().Pods(e.ns).UpdateStatus(t.Context(), failed, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, now := e.waitRolledOut(t, "web", 3)
		if now[0].UID == pods[0].UID || now[2].UID == pods[2].UID || now[1].UID != pods[1].UID {
			t.Errorf("web-0 and web-2 not replaced, or web-1 replaced")
		}
	})

	t.Run("terminating pod waited for", func(t *testing.T) {
		e.waitRolledOut(t, "web", 3)
		if _, err := e.cs.CoreV1().Pods(e.ns).Patch(t.Context(), "web-1", types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":["test.litek8s.io/hold"]}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		held, err := e.cs.CoreV1().Pods(e.ns).Get(t.Context(), "web-1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.cs.CoreV1().Pods(e.ns).Delete(t.Context(), "web-1", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.patch(t, "web", `{"spec":{"replicas":4}}`)
		// While web-1 terminates, nothing replaces it and web-3 waits.
		deadline := time.Now().Add(1500 * time.Millisecond)
		for time.Now().Before(deadline) {
			p, err := e.cs.CoreV1().Pods(e.ns).Get(t.Context(), "web-1", metav1.GetOptions{})
			if err != nil || p.UID != held.UID || p.DeletionTimestamp == nil {
				t.Fatalf("web-1 while terminating: %v %v", p, err)
			}
			if _, err := e.cs.CoreV1().Pods(e.ns).Get(t.Context(), "web-3", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("web-3 created while web-1 terminates (err %v)", err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if _, err := e.cs.CoreV1().Pods(e.ns).Patch(t.Context(), "web-1", types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		_, pods := e.waitRolledOut(t, "web", 4)
		if pods[1].UID == held.UID {
			t.Error("web-1 not recreated")
		}
	})

	t.Run("deleted with claims retained", func(t *testing.T) {
		e.kubectl(t, "delete", "statefulset/web", "--wait=false")
		membertest.Eventually(t, 20*time.Second, func() error {
			l, err := e.cs.CoreV1().Pods(e.ns).List(t.Context(), metav1.ListOptions{})
			if err != nil {
				return err
			}
			if n := len(l.Items); n != 0 {
				return fmt.Errorf("%d pods left", n)
			}
			return nil
		})
		if got := e.claimNames(t); len(got) != 5 {
			t.Errorf("claims %v: Retain keeps all five", got)
		}
	})
}

// testParallelDelete: Parallel pods, available after minReadySeconds;
// claims owned per the Delete/Delete retention policy go with a scale
// down and with the set.
func testParallelDelete(t *testing.T, e *env) {
	set := statefulSet("db", 3, appsv1.ParallelPodManagement)
	set.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.DeletePersistentVolumeClaimRetentionPolicyType}
	set.Spec.MinReadySeconds = 2
	set.Spec.Template.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "nowhere"}
	created := e.create(t, set)
	// Parallel: all three are created though none can start.
	membertest.Eventually(t, 20*time.Second, func() error {
		s, err := e.cs.AppsV1().StatefulSets(e.ns).Get(t.Context(), "db", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if st := s.Status; st.Replicas != 3 || st.ReadyReplicas != 0 || st.UpdatedReplicas != 3 {
			return fmt.Errorf("status %+v, want 3 replicas, none ready", st)
		}
		return nil
	})
	// A new template replaces the pods that cannot start, all at once.
	start := time.Now()
	e.patch(t, "db", `{"spec":{"template":{"spec":{"nodeSelector":null}}}}`)
	e.waitRolledOut(t, "db", 3) // available: ready for minReadySeconds
	if d := time.Since(start); d < time.Second {
		t.Errorf("3 pods available after %v, before minReadySeconds (2 s, in whole seconds)", d)
	}
	for i := range 3 {
		claim, err := e.cs.CoreV1().PersistentVolumeClaims(e.ns).Get(t.Context(), fmt.Sprintf("data-db-%d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ref := metav1.GetControllerOf(claim); ref == nil || ref.UID != created.UID || len(claim.OwnerReferences) != 1 {
			t.Errorf("claim %s owners %v, want the set", claim.Name, claim.OwnerReferences)
		}
	}
	e.patch(t, "db", `{"spec":{"replicas":1}}`)
	e.waitRolledOut(t, "db", 1)
	membertest.Eventually(t, 20*time.Second, func() error {
		if got := e.claimNames(t); !slices.Equal(got, []string{"data-db-0"}) {
			return fmt.Errorf("claims %v, want data-db-0 alone", got)
		}
		return nil
	})
	if err := e.cs.AppsV1().StatefulSets(e.ns).Delete(t.Context(), "db", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	membertest.Eventually(t, 20*time.Second, func() error {
		pods, err := e.cs.CoreV1().Pods(e.ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		if got := e.claimNames(t); len(got) != 0 || len(pods.Items) != 0 {
			return fmt.Errorf("claims %v and %d pods left after the set was deleted", got, len(pods.Items))
		}
		return nil
	})
}
