package pvbinder_test

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// TestStatefulSetClaims is the chart's shape on simulated nodes: a
// StatefulSet whose claim template names no class gets the default
// class, its claims bind to the class's volumes, its pods are scheduled
// once their claims are bound and run, and a PodDisruptionBudget over it
// counts the StatefulSet's replicas.
func TestStatefulSetClaims(t *testing.T) {
	c := membertest.StartCluster(t, 1, func(cfg *member.Config) {
		cfg.Controllers.Scheduling.SimNodes.Count = 2
		cfg.Controllers.Scheduling.Scheduler.BackoffBase = 50 * time.Millisecond
		cfg.Controllers.Scheduling.Scheduler.BackoffMax = 500 * time.Millisecond
	})
	cs := c.Clientset(0)
	ctx := t.Context()
	createClass(t, cs, "standard", "kubernetes.io/no-provisioner", storagev1.VolumeBindingImmediate, true)
	for i := range 3 {
		createPV(t, cs, fmt.Sprintf("disk-%d", i), "2Gi", class("standard"))
	}
	replicas := int32(3)
	labels := map[string]string{"app": "db"}
	ss := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Spec: appsv1.StatefulSetSpec{
		Replicas: &replicas, ServiceName: "db", Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "busybox",
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}}}},
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}}}
	if _, err := cs.AppsV1().StatefulSets(ns).Create(ctx, ss, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	one := intstr.FromInt32(1)
	if _, err := cs.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one, Selector: &metav1.LabelSelector{MatchLabels: labels}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	membertest.Eventually(t, 60*time.Second, func() error {
		s, err := cs.AppsV1().StatefulSets(ns).Get(ctx, "db", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if s.Status.ReadyReplicas != 3 {
			return fmt.Errorf("statefulset db: %d ready replicas", s.Status.ReadyReplicas)
		}
		return nil
	})
	used := map[string]bool{}
	for i := range 3 {
		name := fmt.Sprintf("data-db-%d", i)
		cl, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cl.Spec.StorageClassName == nil || *cl.Spec.StorageClassName != "standard" || cl.Status.Phase != corev1.ClaimBound {
			t.Errorf("claim %s: class %v phase %s", name, cl.Spec.StorageClassName, cl.Status.Phase)
		}
		waitBound(t, cs, name, cl.Spec.VolumeName)
		used[cl.Spec.VolumeName] = true
	}
	if len(used) != 3 {
		t.Errorf("claims share volumes: %v", used)
	}
	membertest.Eventually(t, 20*time.Second, func() error {
		pdb, err := cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "db", metav1.GetOptions{})
		if err != nil {
			return err
		}
		st := pdb.Status
		if st.ExpectedPods != 3 || st.DesiredHealthy != 2 || st.CurrentHealthy != 3 || st.DisruptionsAllowed != 1 {
			return fmt.Errorf("budget db: status %+v", st)
		}
		return nil
	})
}
