package replicaset_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/controllers/workload/workloadtest"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// The ReplicaSet controller in a cluster of 3, driven through a follower
// with client-go; the test is the kubelet.
func TestReplicaSet(t *testing.T) {
	c := membertest.StartCluster(t, 3)
	cs := c.Clientset(c.Follower())
	ns := "rs"
	workloadtest.Namespace(t, cs, ns)
	workloadtest.StartKubelet(t, cs, ns, workloadtest.Run)
	rec := workloadtest.Record(t, func(o metav1.ListOptions) (watch.Interface, error) { return cs.CoreV1().Pods(ns).Watch(t.Context(), o) })
	t.Run("scale", func(t *testing.T) { testScale(t, cs, ns, rec) })
	t.Run("adopt and release", func(t *testing.T) { testAdoptRelease(t, cs, ns) })
}

func replicaSet(name string, replicas int32) *appsv1.ReplicaSet {
	labels := map[string]string{"app": name}
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
}

// ownedPods returns the pods of ns that rs controls.
func ownedPods(ctx context.Context, cs kubernetes.Interface, ns string, uid types.UID) ([]corev1.Pod, error) {
	l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == uid {
			out = append(out, p)
		}
	}
	return out, nil
}

// waitReady waits until rs has n pods and reports them all ready and
// available for its current generation.
func waitReady(t *testing.T, cs kubernetes.Interface, ns, name string, n int32) *appsv1.ReplicaSet {
	t.Helper()
	var rs *appsv1.ReplicaSet
	membertest.Eventually(t, 30*time.Second, func() (err error) {
		rs, err = cs.AppsV1().ReplicaSets(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		st := rs.Status
		if st.ObservedGeneration != rs.Generation || st.Replicas != n || st.ReadyReplicas != n || st.AvailableReplicas != n || st.FullyLabeledReplicas != n {
			return fmt.Errorf("replicaset %s: generation %d, status %+v, want %d replicas", name, rs.Generation, st, n)
		}
		pods, err := ownedPods(t.Context(), cs, ns, rs.UID)
		if err != nil {
			return err
		}
		if len(pods) != int(n) {
			return fmt.Errorf("replicaset %s controls %d pods, want %d", name, len(pods), n)
		}
		return nil
	})
	return rs
}

func setReplicas(t *testing.T, cs kubernetes.Interface, ns, name string, n int32) {
	t.Helper()
	p := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, n)
	if _, err := cs.AppsV1().ReplicaSets(ns).Patch(t.Context(), name, types.MergePatchType, p, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// testScale: pods are created from the template to the replicas, never
// more than needed (each creation is seen once), and deleted when scaled
// down.
func testScale(t *testing.T, cs kubernetes.Interface, ns string, rec *workloadtest.Recorder) {
	rs, err := cs.AppsV1().ReplicaSets(ns).Create(t.Context(), replicaSet("web", 3), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitReady(t, cs, ns, "web", 3)
	pods, err := ownedPods(t.Context(), cs, ns, rs.UID)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		ref := metav1.GetControllerOf(&p)
		if !strings.HasPrefix(p.Name, "web-") || p.GenerateName != "web-" || p.Labels["app"] != "web" ||
			ref.Kind != "ReplicaSet" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
			t.Errorf("pod %s: generateName %q, labels %v, controller %+v", p.Name, p.GenerateName, p.Labels, ref)
		}
	}
	setReplicas(t, cs, ns, "web", 7)
	waitReady(t, cs, ns, "web", 7)
	setReplicas(t, cs, ns, "web", 2)
	waitReady(t, cs, ns, "web", 2)
	// Seven pods were needed: no more were created.
	added := 0
	for _, e := range rec.Events() {
		if e.Type == watch.Added && strings.HasPrefix(e.Object.(*corev1.Pod).Name, "web-") {
			added++
		}
	}
	if added != 7 {
		t.Errorf("%d pods created for web, want 7", added)
	}
}

// testAdoptRelease: an orphan pod that matches is adopted (and counts);
// a pod relabelled out of the selector is released and replaced.
func testAdoptRelease(t *testing.T, cs kubernetes.Interface, ns string) {
	orphan, err := cs.CoreV1().Pods(ns).Create(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan",
		Labels: map[string]string{"app": "api"}}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := cs.AppsV1().ReplicaSets(ns).Create(t.Context(), replicaSet("api", 2), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitReady(t, cs, ns, "api", 2)
	p, err := cs.CoreV1().Pods(ns).Get(t.Context(), "orphan", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(p); ref == nil || ref.UID != rs.UID || p.UID != orphan.UID {
		t.Fatalf("orphan not adopted: owners %v", p.OwnerReferences)
	}
	// Released when its labels no longer match; a new pod replaces it.
	if _, err := cs.CoreV1().Pods(ns).Patch(t.Context(), "orphan", types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"app":"debug"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	membertest.Eventually(t, 20*time.Second, func() error {
		p, err := cs.CoreV1().Pods(ns).Get(t.Context(), "orphan", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(p.OwnerReferences) != 0 {
			return fmt.Errorf("orphan still owned: %v", p.OwnerReferences)
		}
		return nil
	})
	waitReady(t, cs, ns, "api", 2)
}
