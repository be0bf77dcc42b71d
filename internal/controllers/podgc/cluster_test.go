package podgc_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/litek8s/litek8s/internal/controllers/podgc"
	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

const quarantine = 2 * time.Second

// boundPod creates pod name bound to node, tolerating every taint (the
// node lifecycle controller taints nodes with no kubelet).
func boundPod(t *testing.T, cs kubernetes.Interface, ns, name, node string) *corev1.Pod {
	t.Helper()
	p, err := cs.CoreV1().Pods(ns).Create(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/x:1"}},
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOrphanedPods: the pods of a node that does not exist (one running,
// one Terminating whose grace period ended) are marked Failed with the
// DisruptionTarget condition and deleted after the quarantine; the pod of
// a node that exists stays.
func TestOrphanedPods(t *testing.T) {
	c := membertest.StartCluster(t, 1, func(cfg *member.Config) {
		cfg.Controllers.Scheduling.PodGC = podgcConfig()
	})
	cs := c.Clientset(0)
	ctx := t.Context()
	const ns = "orphans"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "here"}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	start := time.Now()
	orphan := boundPod(t, cs, ns, "orphan", "gone")
	boundPod(t, cs, ns, "terminating", "gone")
	boundPod(t, cs, ns, "kept", "here")
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "terminating", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)}); err != nil {
		t.Fatal(err)
	}

	// The orphan is marked Failed, then deleted, not before the quarantine.
	var failed *corev1.Pod
	deleted := map[string]time.Time{}
	timeout := time.After(20 * time.Second)
	for len(deleted) < 2 {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch ended")
			}
			p, _ := e.Object.(*corev1.Pod)
			switch {
			case p == nil:
				t.Fatalf("watch event %v %T", e.Type, e.Object)
			case e.Type == watch.Deleted:
				deleted[p.Name] = time.Now()
			case e.Type == watch.Modified && p.Name == "orphan" && p.Status.Phase == corev1.PodFailed && failed == nil:
				failed = p
			}
		case <-timeout:
			t.Fatalf("deleted %v after 20 s, want orphan and terminating", deleted)
		}
	}
	for n, at := range deleted {
		if n != "orphan" && n != "terminating" {
			t.Errorf("pod %s deleted", n)
		}
		if d := at.Sub(start); d < quarantine {
			t.Errorf("pod %s deleted after %v, before the %v quarantine", n, d, quarantine)
		}
	}
	if failed == nil || failed.UID != orphan.UID {
		t.Fatalf("orphan never seen Failed before its deletion (%+v)", failed)
	}
	var cond *corev1.PodCondition
	for i := range failed.Status.Conditions {
		if failed.Status.Conditions[i].Type == corev1.DisruptionTarget {
			cond = &failed.Status.Conditions[i]
		}
	}
	if cond == nil || cond.Status != corev1.ConditionTrue || cond.Reason != "DeletionByPodGC" ||
		cond.Message != "PodGC: node no longer exists" {
		t.Errorf("orphan's DisruptionTarget condition %+v", cond)
	}

	// The pod of the node that exists stays.
	time.Sleep(2 * podgcConfig().CheckPeriod)
	if _, err := cs.CoreV1().Pods(ns).Get(ctx, "kept", metav1.GetOptions{}); err != nil {
		t.Errorf("pod on an existing node: %v", err)
	}
	if _, err := cs.CoreV1().Pods(ns).Get(ctx, "orphan", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("orphan after its deletion: %v, want NotFound", err)
	}
}

func podgcConfig() (cfg podgc.Config) {
	cfg.CheckPeriod, cfg.Quarantine = 200*time.Millisecond, quarantine
	return cfg
}
