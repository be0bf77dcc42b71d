package scheduler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
)

// listersOf builds volume listers over fixed objects (a unit test of
// volumesOf and decide).
func listersOf(t testing.TB, objs ...any) *volumeListers {
	t.Helper()
	idx := func() cache.Indexer {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
	claims, volumes, classes := idx(), idx(), idx()
	for _, o := range objs {
		var err error
		switch o.(type) {
		case *corev1.PersistentVolumeClaim:
			err = claims.Add(o)
		case *corev1.PersistentVolume:
			err = volumes.Add(o)
		case *storagev1.StorageClass:
			err = classes.Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return &volumeListers{claims: corelisters.NewPersistentVolumeClaimLister(claims),
		volumes: corelisters.NewPersistentVolumeLister(volumes), classes: storagelisters.NewStorageClassLister(classes)}
}

func claimOf(name, class, volume string, annotations map[string]string) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Annotations: annotations},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &class, VolumeName: volume,
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	if volume != "" {
		metav1.SetMetaDataAnnotation(&c.ObjectMeta, annBindCompleted, "yes")
	}
	return c
}

func volumeOn(name, host string, labels map[string]string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PersistentVolumeSpec{NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{expr("kubernetes.io/hostname", corev1.NodeSelectorOpIn, host)}}}}}
}

// availableOn is an Available volume of class and size pinned to host.
func availableOn(name, host, class, size string) *corev1.PersistentVolume {
	pv := volumeOn(name, host, nil)
	pv.Spec.StorageClassName = class
	pv.Spec.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}
	pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	pv.Status.Phase = corev1.VolumeAvailable
	return pv
}

func usingClaim(name string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name}}})
	}
}

func TestDecideVolumes(t *testing.T) {
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	later := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "later"}, VolumeBindingMode: &wffc}
	local := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local"}, VolumeBindingMode: &wffc,
		Provisioner: "kubernetes.io/no-provisioner"}
	nodes := []*corev1.Node{node("a", 4, 8, 110), node("b", 4, 8, 110, labels(corev1.LabelTopologyZone, "z2"))}
	cases := []struct {
		name    string
		objs    []any
		pod     *corev1.Pod
		want    string // node, or the Unschedulable message
		waiting []string
	}{
		{name: "no volumes", pod: pod("p", 0, 0), want: "a"},
		{name: "missing claim", pod: pod("p", 0, 0, usingClaim("x")),
			want: `0/2 nodes are available: persistentvolumeclaim "x" not found.`},
		{name: "unbound immediate", objs: []any{claimOf("x", "", "", nil)}, pod: pod("p", 0, 0, usingClaim("x")),
			want: "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims."},
		{name: "bound: the volume's node", objs: []any{claimOf("x", "", "pv", nil), volumeOn("pv", "b", nil)},
			pod: pod("p", 0, 0, usingClaim("x")), want: "b"},
		{name: "bound: affinity conflict", objs: []any{claimOf("x", "", "pv", nil), volumeOn("pv", "c", nil)},
			pod: pod("p", 0, 0, usingClaim("x")), want: "0/2 nodes are available: 2 node(s) didn't match PersistentVolume's node affinity."},
		{name: "bound: volume missing", objs: []any{claimOf("x", "", "pv", nil)}, pod: pod("p", 0, 0, usingClaim("x")),
			want: "0/2 nodes are available: 2 node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)."},
		{name: "lost claim", objs: []any{func() any {
			c := claimOf("x", "", "pv", nil)
			c.Status.Phase = corev1.ClaimLost
			return c
		}()}, pod: pod("p", 0, 0, usingClaim("x")),
			want: `0/2 nodes are available: persistentvolumeclaim "x" bound to non-existent persistentvolume "pv".`},
		{name: "pre-bound, not bound yet: immediate", objs: []any{later, func() any {
			c := claimOf("x", "later", "", nil)
			c.Spec.VolumeName = "pv"
			return c
		}()}, pod: pod("p", 0, 0, usingClaim("x")),
			want: "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims."},
		{name: "bound: zone", objs: []any{claimOf("x", "", "pv", nil),
			&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv", Labels: map[string]string{corev1.LabelTopologyZone: "z1__z2"}}}},
			pod: pod("p", 0, 0, usingClaim("x")), want: "b"},
		{name: "wait for first consumer: any node, claims to annotate", objs: []any{later, claimOf("x", "later", "", nil)},
			pod: pod("p", 0, 0, usingClaim("x")), want: "a", waiting: []string{"x"}},
		{name: "wait for first consumer: the selected node", objs: []any{later,
			claimOf("x", "later", "", map[string]string{annSelectedNode: "b"})},
			pod: pod("p", 0, 0, usingClaim("x")), want: "b"},
		{name: "static volumes: a node one of them allows", objs: []any{local, claimOf("x", "local", "", nil),
			availableOn("pv-small", "a", "local", "1Mi"), availableOn("pv-b", "b", "local", "1Gi")},
			pod: pod("p", 0, 0, usingClaim("x")), want: "b", waiting: []string{"x"}},
		{name: "static volumes: none fits", objs: []any{local, claimOf("x", "local", "", nil),
			availableOn("pv-small", "a", "local", "1Mi"), availableOn("pv-other", "b", "other", "1Gi")},
			pod:  pod("p", 0, 0, usingClaim("x")),
			want: "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind.", waiting: []string{"x"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newNodeCache()
			for _, n := range nodes {
				c.setNode(n.Name, n)
			}
			p := newPodInfo(tc.pod)
			p.vol = listersOf(t, tc.objs...).volumesOf(tc.pod)
			best, fit, _ := decide(p, c.nodeList(), nil)
			got := ""
			if best != nil {
				got = best.name
			} else {
				got = fit.Error()
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if p.vol != nil && len(p.vol.toSelect) != len(tc.waiting) {
				t.Errorf("claims to select a node for: %v, want %v", p.vol.toSelect, tc.waiting)
			}
		})
	}
}

// BenchmarkVolumesOf is the cost volumes add to a scheduling attempt: none
// for a pod without claims, a few lookups for one with a bound claim.
func BenchmarkVolumesOf(b *testing.B) {
	l := listersOf(b, claimOf("x", "", "pv", nil), volumeOn("pv", "b", nil))
	for _, bc := range []struct {
		name string
		pod  *corev1.Pod
	}{{"no claims", pod("p", 0, 0)}, {"bound claim", pod("p", 0, 0, usingClaim("x"))}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = l.volumesOf(bc.pod)
			}
		})
	}
}
