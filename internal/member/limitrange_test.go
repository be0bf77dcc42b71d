package member_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// LimitRanger admission through client-go on a real member: defaults
// from the namespace's LimitRange on a new pod, and min/max/ratio checks
// on pods and claims, with kube's messages.
func TestLimitRanger(t *testing.T) {
	c := membertest.StartCluster(t, 1, membertest.FastRaft)
	cs := c.PlainClientset(0)
	const ns = "lr"
	createNamespace(t, cs, ns)
	waitDefaultSA(t, cs, ns)
	ctx := t.Context()
	q := resource.MustParse
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "limits"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypeContainer,
			Min:                  corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("100Mi")},
			Max:                  corev1.ResourceList{corev1.ResourceCPU: q("500m"), corev1.ResourceMemory: q("500Mi")},
			DefaultRequest:       corev1.ResourceList{corev1.ResourceCPU: q("200m")},
			Default:              corev1.ResourceList{corev1.ResourceCPU: q("300m"), corev1.ResourceMemory: q("300Mi")},
			MaxLimitRequestRatio: corev1.ResourceList{corev1.ResourceMemory: q("4")}},
		{Type: corev1.LimitTypePersistentVolumeClaim,
			Min: corev1.ResourceList{corev1.ResourceStorage: q("1Gi")},
			Max: corev1.ResourceList{corev1.ResourceStorage: q("2Gi")}},
	}}}
	if _, err := cs.CoreV1().LimitRanges(ns).Create(ctx, lr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("defaults", func(t *testing.T) {
		p := admissionPod("no-resources")
		p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox:1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("150m")}}}}
		got, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The default request of memory is the default limit (LimitRange
		// defaulting); the init container keeps its own cpu request.
		want := map[string]corev1.ResourceRequirements{
			"c": {Requests: corev1.ResourceList{corev1.ResourceCPU: q("200m"), corev1.ResourceMemory: q("300Mi")},
				Limits: corev1.ResourceList{corev1.ResourceCPU: q("300m"), corev1.ResourceMemory: q("300Mi")}},
			"init": {Requests: corev1.ResourceList{corev1.ResourceCPU: q("150m"), corev1.ResourceMemory: q("300Mi")},
				Limits: corev1.ResourceList{corev1.ResourceCPU: q("300m"), corev1.ResourceMemory: q("300Mi")}},
		}
		for _, cs := range [][]corev1.Container{got.Spec.Containers, got.Spec.InitContainers} {
			for _, c := range cs {
				if !sameList(c.Resources.Requests, want[c.Name].Requests) || !sameList(c.Resources.Limits, want[c.Name].Limits) {
					t.Errorf("container %s: %+v, want %+v", c.Name, c.Resources, want[c.Name])
				}
			}
		}
		const note = "LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c; " +
			"memory request for init container init; cpu, memory limit for init container init"
		if a := got.Annotations["kubernetes.io/limit-ranger"]; a != note {
			t.Errorf("annotation %q, want %q", a, note)
		}
		if got.Status.QOSClass != corev1.PodQOSBurstable {
			t.Errorf("qosClass %q, want Burstable (computed after the defaults)", got.Status.QOSClass)
		}
	})

	refused := []struct {
		name string
		res  corev1.ResourceRequirements
		want string
	}{
		{"below-min", corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("50m")}},
			`pods "below-min" is forbidden: minimum cpu usage per Container is 100m, but request is 50m`},
		{"above-max", corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: q("1Gi")}},
			`pods "above-max" is forbidden: maximum memory usage per Container is 500Mi, but limit is 1Gi`},
		{"ratio", corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: q("100Mi")},
			Limits: corev1.ResourceList{corev1.ResourceMemory: q("500Mi")}},
			`pods "ratio" is forbidden: memory max limit to request ratio per Container is 4, but provided ratio is 5.000000`},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			p := admissionPod(tt.name)
			p.Spec.Containers[0].Resources = tt.res
			_, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
			if err == nil || err.Error() != tt.want {
				t.Fatalf("create: %v, want %q", err, tt.want)
			}
			if _, err := cs.CoreV1().Pods(ns).Get(ctx, tt.name, metav1.GetOptions{}); err == nil {
				t.Errorf("refused pod %s was stored", tt.name)
			}
		})
	}

	t.Run("claims", func(t *testing.T) {
		claim := func(name, size string) *corev1.PersistentVolumeClaim {
			return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q(size)}}}}
		}
		if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim("fits", "1500Mi"), metav1.CreateOptions{}); err != nil {
			t.Errorf("claim within the limits: %v", err)
		}
		_, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim("big", "3Gi"), metav1.CreateOptions{})
		const want = `persistentvolumeclaims "big" is forbidden: maximum storage usage per PersistentVolumeClaim is 2Gi, but request is 3Gi`
		if err == nil || err.Error() != want {
			t.Errorf("claim over max: %v, want %q", err, want)
		}
		_, err = cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim("small", "100Mi"), metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), "minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 100Mi") {
			t.Errorf("claim under min: %v", err)
		}
	})
}

// sameList: the same resources with equal quantities.
func sameList(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || v.Cmp(w) != 0 {
			return false
		}
	}
	return true
}
