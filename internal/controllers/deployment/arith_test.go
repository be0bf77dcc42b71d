package deployment

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestFenceposts(t *testing.T) {
	i, p := intstr.FromInt32, intstr.FromString
	for _, tc := range []struct {
		name                string
		surge, unavailable  *intstr.IntOrString
		replicas            int32
		wantSurge, wantUnav int32
	}{
		{"defaults 25% of 10", nil, nil, 10, 3, 2},
		{"defaults 25% of 1", nil, nil, 1, 1, 0},
		{"ints", ptr(i(2)), ptr(i(1)), 6, 2, 1},
		{"percent rounding", ptr(p("10%")), ptr(p("10%")), 55, 6, 5},
		{"both zero makes one unavailable", ptr(i(0)), ptr(i(0)), 5, 0, 1},
		{"zero percent of few", ptr(p("0%")), ptr(p("20%")), 3, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, u := fenceposts(tc.surge, tc.unavailable, tc.replicas)
			if s != tc.wantSurge || u != tc.wantUnav {
				t.Errorf("fenceposts = %d, %d; want %d, %d", s, u, tc.wantSurge, tc.wantUnav)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func rollingDeployment(replicas, surge, unavailable int32) *appsv1.Deployment {
	s, u := intstr.FromInt32(surge), intstr.FromInt32(unavailable)
	return &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: &replicas, Strategy: appsv1.DeploymentStrategy{
		Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &s, MaxUnavailable: &u}}}}
}

func rs(spec, status, available int32) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Replicas: &spec},
		Status: appsv1.ReplicaSetStatus{Replicas: status, AvailableReplicas: available}}
}

func TestNewRSReplicas(t *testing.T) {
	d := rollingDeployment(10, 2, 1)
	for _, tc := range []struct {
		name     string
		old, new *appsv1.ReplicaSet
		want     int32
	}{
		{"start: surge", rs(10, 10, 10), rs(0, 0, 0), 2},
		{"surge used", rs(10, 10, 10), rs(2, 2, 2), 2},
		{"old scaled down", rs(8, 8, 8), rs(2, 2, 2), 4},
		{"old scaled down, its pods not gone yet", rs(8, 10, 8), rs(2, 2, 2), 2},
		{"never past replicas", rs(0, 0, 0), rs(9, 9, 9), 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := newRSReplicas(d, []*appsv1.ReplicaSet{tc.old, tc.new}, tc.new); got != tc.want {
				t.Errorf("newRSReplicas = %d, want %d", got, tc.want)
			}
		})
	}
	if got := newRSReplicas(&appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(4)),
		Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}}}, nil, rs(0, 0, 0)); got != 4 {
		t.Errorf("Recreate: newRSReplicas = %d, want 4", got)
	}
}

func TestOldScaleDown(t *testing.T) {
	d := rollingDeployment(10, 2, 1) // at least 9 available
	for _, tc := range []struct {
		name              string
		old, new          *appsv1.ReplicaSet
		budget, fromAvail int32
	}{
		{"new pods not available yet", rs(10, 10, 10), rs(2, 2, 0), 1, 1},
		{"new pods available", rs(10, 10, 10), rs(2, 2, 2), 3, 3},
		{"old pods unavailable", rs(10, 10, 7), rs(2, 2, 2), 3, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			all := []*appsv1.ReplicaSet{tc.old, tc.new}
			if got := oldScaleDownBudget(d, all, tc.new); got != tc.budget {
				t.Errorf("oldScaleDownBudget = %d, want %d", got, tc.budget)
			}
			if got := availableScaleDown(d, all); got != tc.fromAvail {
				t.Errorf("availableScaleDown = %d, want %d", got, tc.fromAvail)
			}
		})
	}
}

func TestProportions(t *testing.T) {
	for _, tc := range []struct {
		sizes, sizedFor         []int32
		newMax, replicas, delta int32
		want                    []int32
	}{
		// The e2e "proportional scaling" case: 10 replicas (maxSurge 3)
		// mid-rollout as 8+5, scaled to 30: 20 and 13, as kube.
		{[]int32{8, 5}, []int32{13, 13}, 33, 30, 20, []int32{12, 8}},
		// And back down to 10.
		{[]int32{20, 13}, []int32{33, 33}, 13, 10, -20, []int32{-12, -8}},
		{[]int32{6, 3}, []int32{9, 9}, 0, 0, -9, []int32{-6, -3}}, // to zero
		{[]int32{6, 3}, []int32{0, 0}, 12, 10, 3, []int32{3, 0}},  // sizes unknown: the first takes it
		{[]int32{2, 1}, []int32{3, 3}, 1, 1, -5, []int32{-2, -1}}, // never below zero
		{[]int32{5, 5}, []int32{10, 10}, 3, 3, -7, []int32{-4, -3}},
	} {
		got := proportions(tc.sizes, tc.sizedFor, tc.newMax, tc.replicas, tc.delta)
		if !slices.Equal(got, tc.want) {
			t.Errorf("proportions(%v, %v, %d, %d, %d) = %v, want %v", tc.sizes, tc.sizedFor, tc.newMax, tc.replicas,
				tc.delta, got, tc.want)
		}
	}
}

func TestComputeHash(t *testing.T) {
	tpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.28"}}}}
	h := ComputeHash(&tpl, nil)
	if h != ComputeHash(tpl.DeepCopy(), nil) || len(h) < 8 || len(h) > 10 {
		t.Errorf("hash %q: not stable or not kube's shape", h)
	}
	one := int32(1)
	if ComputeHash(&tpl, &one) == h {
		t.Error("the collision count does not change the hash")
	}
	other := tpl.DeepCopy()
	other.Spec.Containers[0].Image = "nginx:1.29"
	if ComputeHash(other, nil) == h {
		t.Error("another image, same hash")
	}
	hashed := tpl.DeepCopy()
	hashed.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = h
	if !equalIgnoreHash(hashed, &tpl) || equalIgnoreHash(other, &tpl) {
		t.Error("equalIgnoreHash")
	}
}
