package volumeprotection_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// A claim used by a pod bound to a node stays Terminating until the pod is
// gone; an unused claim, or one only named by an unscheduled pod, goes at
// once; a volume goes once it is not Bound; a claim that lost its
// finalizer gets it back.
func TestVolumeProtection(t *testing.T) {
	c := membertest.StartCluster(t, 1, func(cfg *member.Config) {
		// The test sets the volumes' phases itself.
		cfg.Controllers.Disabled = append(cfg.Controllers.Disabled, "persistentvolume-binder")
	})
	cs := c.Clientset(0)
	ctx := t.Context()
	const ns = "vol"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"used", "free", "unscheduled", "bare"} {
		claim(t, cs, ns, name)
	}
	podUsing(t, cs, ns, "user", "used", "node-1")
	podUsing(t, cs, ns, "pending", "unscheduled", "")

	// The finalizer comes back on a claim that is not being deleted.
	if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Patch(ctx, "bare", types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	membertest.Eventually(t, 10*time.Second, func() error {
		pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "bare", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !slices.Contains(pvc.Finalizers, "kubernetes.io/pvc-protection") {
			return fmt.Errorf("finalizers %v", pvc.Finalizers)
		}
		return nil
	})

	for _, name := range []string{"used", "free", "unscheduled"} {
		if err := cs.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	getPVC := func(name string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
			return err
		}
	}
	waitGone(t, "claim free", getPVC("free"))
	waitGone(t, "claim unscheduled", getPVC("unscheduled"))
	pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "used", metav1.GetOptions{})
	if err != nil || pvc.DeletionTimestamp == nil || !slices.Contains(pvc.Finalizers, "kubernetes.io/pvc-protection") {
		t.Fatalf("claim used by a pod: %v %+v, want it Terminating with its finalizer", err, pvc.ObjectMeta)
	}
	// Gracefully deleted, the pod still uses the claim.
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "user", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	membertest.MustStay(t, "claim used by a terminating pod", getPVC("used"))
	zero := int64(0)
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "user", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "claim used", getPVC("used"))

	// Volumes: Bound ones stay.
	for _, name := range []string{"pv-free", "pv-bound"} {
		if _, err := cs.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + name}}}},
			metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cs.CoreV1().PersistentVolumes().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}
	setPhase := func(name string, phase corev1.PersistentVolumePhase) {
		t.Helper()
		pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pv.Status.Phase = phase
		if _, err := cs.CoreV1().PersistentVolumes().UpdateStatus(ctx, pv, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setPhase("pv-bound", corev1.VolumeBound)
	getPV := func(name string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := cs.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
			return err
		}
	}
	for _, name := range []string{"pv-free", "pv-bound"} {
		if err := cs.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitGone(t, "volume pv-free", getPV("pv-free"))
	membertest.MustStay(t, "Bound volume", getPV("pv-bound"))
	setPhase("pv-bound", corev1.VolumeReleased)
	waitGone(t, "volume pv-bound", getPV("pv-bound"))
}

func claim(t *testing.T, cs kubernetes.Interface, ns, name string) {
	t.Helper()
	pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(t.Context(), &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pvc.Finalizers, "kubernetes.io/pvc-protection") {
		t.Fatalf("new claim %s: finalizers %v, want the API to add kubernetes.io/pvc-protection", name, pvc.Finalizers)
	}
}

func podUsing(t *testing.T, cs kubernetes.Interface, ns, name, claim, node string) {
	t.Helper()
	_, err := cs.CoreV1().Pods(ns).Create(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func waitGone(t *testing.T, what string, get func(context.Context) error) {
	t.Helper()
	membertest.WaitGone(t, 10*time.Second, what, get)
}
