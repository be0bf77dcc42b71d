package statefulset

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func TestParentAndOrdinal(t *testing.T) {
	for _, tc := range []struct {
		name, parent string
		ordinal      int
	}{
		{"web-0", "web", 0},
		{"web-12", "web", 12},
		{"my-db-3", "my-db", 3},
		{"web", "", -1},
		{"web-", "", -1},
		{"web-1a", "", -1},
		{"web-+1", "", -1},
		{"web-99999999999", "web", -1}, // overflows an int32
	} {
		if p, o := parentAndOrdinal(tc.name); p != tc.parent || o != tc.ordinal {
			t.Errorf("%s: %q %d, want %q %d", tc.name, p, o, tc.parent, tc.ordinal)
		}
	}
}

func testSet(replicas int32, scaled, deleted appsv1.PersistentVolumeClaimRetentionPolicyType) *appsv1.StatefulSet {
	labels := map[string]string{"app": "web"}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "set-uid", Annotations: map[string]string{"a": "b"}},
		Spec: appsv1.StatefulSetSpec{Replicas: &replicas, ServiceName: "web", Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}},
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenScaled: scaled, WhenDeleted: deleted}}}
}

// TestClaimOwners: the owners of a claim follow the retention policy, for
// a pod in range and a pod scaled down.
func TestClaimOwners(t *testing.T) {
	for _, tc := range []struct {
		scaled, deleted     appsv1.PersistentVolumeClaimRetentionPolicyType
		inRange, scaledDown string // owners: "", "set", "pod"
	}{
		{retain, retain, "", ""},
		{retain, del, "set", "set"},
		{del, retain, "", "pod"},
		{del, del, "set", "pod"},
	} {
		set := testSet(2, tc.scaled, tc.deleted)
		for ordinal, want := range map[int]string{1: tc.inRange, 5: tc.scaledDown} {
			pod := newPod(set, ordinal, "web-rev")
			pod.UID = "pod-uid"
			claim := claimsFor(set, pod)[0]
			if claim.Name != "data-web-"+string(rune('0'+ordinal)) || claim.Labels["app"] != "web" {
				t.Fatalf("claim %s labels %v", claim.Name, claim.Labels)
			}
			// Stale owners of an earlier policy are replaced.
			claim.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(set, kind)}
			setClaimOwners(claim, set, pod)
			got := ""
			if ref := metav1.GetControllerOf(claim); ref != nil {
				got = map[string]string{"StatefulSet": "set", "Pod": "pod"}[ref.Kind]
			}
			if got != want || len(claim.OwnerReferences) > 1 {
				t.Errorf("%s/%s, ordinal %d: owners %v, want %q", tc.scaled, tc.deleted, ordinal, claim.OwnerReferences, want)
			}
			if !ownersUpToDate(claim, set, pod) {
				t.Errorf("%s/%s, ordinal %d: not up to date after setClaimOwners", tc.scaled, tc.deleted, ordinal)
			}
		}
	}
	// Another controller's claim is left alone.
	set := testSet(2, del, del)
	pod := newPod(set, 0, "r")
	claim := claimsFor(set, pod)[0]
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "x", Controller: ptr.To(true)}
	claim.OwnerReferences = []metav1.OwnerReference{other}
	if !ownersUpToDate(claim, set, pod) {
		t.Error("a claim of another controller is to be changed")
	}
}

// TestRevision: a revision holds the template as kube's patch, restores
// it, and is named by its data and collision count.
func TestRevision(t *testing.T) {
	set := testSet(3, retain, retain)
	rev, err := newRevision(set, 4, ptr.To(int32(0)))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"web"}},` +
		`"spec":{"containers":[{"image":"busybox","name":"c","resources":{}}]}}}}`
	if string(rev.Data.Raw) != want {
		t.Errorf("data\n%s\nwant\n%s", rev.Data.Raw, want)
	}
	hash := rev.Labels[hashLabel]
	if rev.Name != "web-"+hash || rev.Revision != 4 || rev.Labels["app"] != "web" || rev.Annotations["a"] != "b" ||
		metav1.GetControllerOf(rev).UID != set.UID {
		t.Errorf("revision %+v", rev.ObjectMeta)
	}
	if other, _ := newRevision(set, 4, ptr.To(int32(1))); other.Name == rev.Name {
		t.Error("the collision count does not change the name")
	}
	changed := set.DeepCopy()
	changed.Spec.Template.Spec.Containers[0].Image = "busybox:2"
	restored, err := applyRevision(changed, rev)
	if err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(restored.Spec.Template, set.Spec.Template) || *restored.Spec.Replicas != *changed.Spec.Replicas {
		t.Errorf("restored template %+v", restored.Spec.Template)
	}
}

func TestPodIdentity(t *testing.T) {
	set := testSet(3, retain, retain)
	set.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "data"}, {Name: "config"}}
	pod := newPod(set, 2, "web-abc")
	if pod.Name != "web-2" || pod.Namespace != "ns" || pod.Spec.Hostname != "web-2" || pod.Spec.Subdomain != "web" ||
		pod.Labels[appsv1.StatefulSetPodNameLabel] != "web-2" || pod.Labels[appsv1.PodIndexLabel] != "2" ||
		pod.Labels[appsv1.StatefulSetRevisionLabel] != "web-abc" || !identityMatches(set, pod) || !storageMatches(set, pod) {
		t.Fatalf("pod %+v", pod)
	}
	if len(pod.Spec.Volumes) != 2 || pod.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "data-web-2" ||
		pod.Spec.Volumes[1].Name != "config" {
		t.Errorf("volumes %+v", pod.Spec.Volumes)
	}
	if set.Spec.Template.Labels[appsv1.StatefulSetPodNameLabel] != "" {
		t.Error("the template was modified")
	}
	set.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 3} // ordinals 3, 4, 5
	for o, want := range map[int]bool{2: false, 3: true, 5: true, 6: false} {
		if got := inRange(set, newPod(set, o, "r")); got != want {
			t.Errorf("ordinal %d in range %v, want %v", o, got, want)
		}
	}
}

func TestMaxUnavailable(t *testing.T) {
	for _, tc := range []struct {
		v        *intstr.IntOrString
		replicas int
		want     int
	}{
		{nil, 5, 1},
		{ptr.To(intstr.FromInt32(3)), 5, 3},
		{ptr.To(intstr.FromString("50%")), 5, 2},
		{ptr.To(intstr.FromString("10%")), 3, 1},
	} {
		if got, err := maxUnavailableOf(tc.v, tc.replicas); err != nil || got != tc.want {
			t.Errorf("%v of %d: %d %v, want %d", tc.v, tc.replicas, got, err, tc.want)
		}
	}
}

// BenchmarkNewRevision: every sync builds the set's revision to compare
// it with the stored ones.
func BenchmarkNewRevision(b *testing.B) {
	set := testSet(3, retain, retain)
	c := &set.Spec.Template.Spec.Containers[0]
	c.Args = strings.Fields("--data-dir /data --bootstrap-expect 3 --peers https://web-0:6443,https://web-1:6443,https://web-2:6443")
	c.Env = []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := newRevision(set, 1, ptr.To(int32(0))); err != nil {
			b.Fatal(err)
		}
	}
}
