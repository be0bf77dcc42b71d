package replicaset_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/controllers/workload/workloadtest"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// The same controller over ReplicationControllers, driven through a
// follower: pods owned with kind ReplicationController, status written to
// the RC, the scale subresource, adoption and release.
func TestReplicationController(t *testing.T) {
	c := membertest.StartCluster(t, 3)
	cs := c.Clientset(c.Follower())
	ns := "rc"
	workloadtest.Namespace(t, cs, ns)
	workloadtest.StartKubelet(t, cs, ns, workloadtest.Run)
	orphan, err := cs.CoreV1().Pods(ns).Create(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan",
		Labels: map[string]string{"name": "web"}}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	replicas := int32(2)
	rc, err := cs.CoreV1().ReplicationControllers(ns).Create(t.Context(), &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ReplicationControllerSpec{Replicas: &replicas,
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"name": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitRC(t, cs, ns, "web", 2)
	pods, err := ownedPods(t.Context(), cs, ns, rc.UID)
	if err != nil {
		t.Fatal(err)
	}
	adopted := false
	for _, p := range pods {
		ref := metav1.GetControllerOf(&p)
		if ref.Kind != "ReplicationController" || ref.APIVersion != "v1" || ref.Name != "web" {
			t.Errorf("pod %s: controller %+v", p.Name, ref)
		}
		adopted = adopted || p.UID == orphan.UID
	}
	if !adopted {
		t.Errorf("the orphan was not adopted: %d pods owned", len(pods))
	}

	// The scale subresource: autoscaling/v1 with the selector as a string.
	sc, err := cs.CoreV1().ReplicationControllers(ns).GetScale(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Spec.Replicas != 2 || sc.Status.Replicas != 2 || sc.Status.Selector != "name=web" {
		t.Errorf("scale %+v", sc)
	}
	if _, err := cs.CoreV1().ReplicationControllers(ns).UpdateScale(t.Context(), "web", &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 4}}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRC(t, cs, ns, "web", 4)
	// kubectl scale sends a merge patch of the Scale.
	if _, err := cs.CoreV1().ReplicationControllers(ns).Patch(t.Context(), "web", types.MergePatchType,
		[]byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{}, "scale"); err != nil {
		t.Fatal(err)
	}
	waitRC(t, cs, ns, "web", 3)

	// Released when its labels no longer match; a new pod replaces it.
	// (Any owned pod: the scale-down may have deleted the adopted one.)
	owned, err := cs.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "name=web"})
	if err != nil || len(owned.Items) == 0 {
		t.Fatalf("pods of web: %v %v", owned, err)
	}
	released := owned.Items[0].Name
	if _, err := cs.CoreV1().Pods(ns).Patch(t.Context(), released, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"name":"debug"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	membertest.Eventually(t, 20*time.Second, func() error {
		p, err := cs.CoreV1().Pods(ns).Get(t.Context(), released, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(p.OwnerReferences) != 0 {
			return fmt.Errorf("orphan still owned: %v", p.OwnerReferences)
		}
		return nil
	})
	waitRC(t, cs, ns, "web", 3)
	testRCFailure(t, cs, ns)
}

// testRCFailure: pods the API forbids (here: a missing RuntimeClass)
// surface as the RC's ReplicaFailure condition, which goes once the RC
// no longer needs them.
func testRCFailure(t *testing.T, cs kubernetes.Interface, ns string) {
	replicas, class := int32(2), "missing"
	if _, err := cs.CoreV1().ReplicationControllers(ns).Create(t.Context(), &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "forbidden"}, Spec: corev1.ReplicationControllerSpec{Replicas: &replicas,
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"name": "forbidden"}},
				Spec: corev1.PodSpec{RuntimeClassName: &class, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	failure := func() (*corev1.ReplicationControllerCondition, error) {
		rc, err := cs.CoreV1().ReplicationControllers(ns).Get(t.Context(), "forbidden", metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		for _, c := range rc.Status.Conditions {
			if c.Type == corev1.ReplicationControllerReplicaFailure {
				return &c, nil
			}
		}
		if rc.Status.ObservedGeneration != rc.Generation {
			return nil, fmt.Errorf("rc forbidden: generation %d not observed", rc.Generation)
		}
		return nil, nil
	}
	membertest.Eventually(t, 20*time.Second, func() error {
		c, err := failure()
		if err != nil || c == nil || c.Status != corev1.ConditionTrue || c.Reason != "FailedCreate" || !strings.Contains(c.Message, "forbidden") {
			return fmt.Errorf("ReplicaFailure condition %+v (%v)", c, err)
		}
		return nil
	})
	if _, err := cs.CoreV1().ReplicationControllers(ns).Patch(t.Context(), "forbidden", types.MergePatchType,
		[]byte(`{"spec":{"replicas":0}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	membertest.Eventually(t, 20*time.Second, func() error {
		if c, err := failure(); err != nil || c != nil {
			return fmt.Errorf("ReplicaFailure condition %+v (%v)", c, err)
		}
		return nil
	})
}

// waitRC waits until the RC name has n pods, all ready and available, in
// its status for its current generation.
func waitRC(t *testing.T, cs kubernetes.Interface, ns, name string, n int32) {
	t.Helper()
	membertest.Eventually(t, 30*time.Second, func() error {
		rc, err := cs.CoreV1().ReplicationControllers(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		st := rc.Status
		if st.ObservedGeneration != rc.Generation || st.Replicas != n || st.ReadyReplicas != n || st.AvailableReplicas != n || st.FullyLabeledReplicas != n {
			return fmt.Errorf("rc %s: generation %d, status %+v, want %d replicas", name, rc.Generation, st, n)
		}
		pods, err := ownedPods(t.Context(), cs, ns, rc.UID)
		if err != nil {
			return err
		}
		if len(pods) != int(n) {
			return fmt.Errorf("rc %s controls %d pods, want %d", name, len(pods), n)
		}
		return nil
	})
}
