package auth

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

func TestNodeAuthorizer(t *testing.T) {
	claim := "c1"
	pods := []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p1"}, Spec: corev1.PodSpec{NodeName: "n1", ServiceAccountName: "sa1",
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}},
			Containers: []corev1.Container{{Name: "c", EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "env"}}}},
				Env: []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "envsecret"}, Key: "k"}}}}}},
			Volumes: []corev1.Volume{
				{Name: "v", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
				{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "proj"}}}}}}}}},
			Status: corev1.PodStatus{ResourceClaimStatuses: []corev1.PodResourceClaimStatus{{Name: "r", ResourceClaimName: &claim}}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p2"}, Spec: corev1.PodSpec{NodeName: "n2",
			Volumes: []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "other"}}}}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "pending"}, Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "unbound"}}}}}},
	}
	pvcs := []*corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv1"}}}
	n1name := "n1"
	g := NewNodeGraph(NodeObjects{Pods: pods, Claims: pvcs,
		VolumeAttachments: []*storagev1.VolumeAttachment{{ObjectMeta: metav1.ObjectMeta{Name: "va1"}, Spec: storagev1.VolumeAttachmentSpec{NodeName: "n1"}},
			{ObjectMeta: metav1.ObjectMeta{Name: "va2"}, Spec: storagev1.VolumeAttachmentSpec{NodeName: "n2"}}},
		ResourceSlices: []*resourcev1.ResourceSlice{{ObjectMeta: metav1.ObjectMeta{Name: "rs1"}, Spec: resourcev1.ResourceSliceSpec{NodeName: &n1name}}}})
	z := &NodeAuthorizer{Graph: func(context.Context) (*NodeGraph, error) { return g, nil }}
	n1 := &User{Name: "system:node:n1", Groups: []string{GroupNodes, GroupAuthenticated}}
	byNode := fields.OneTermEqualSelector("spec.nodeName", "n1").Requirements()
	res := func(verb, group, resource, sub, ns, name string) Attributes {
		return Attributes{User: n1, Verb: verb, ResourceRequest: true, APIGroup: group, Resource: resource, Subresource: sub, Namespace: ns, Name: name}
	}
	for _, c := range []struct {
		name   string
		a      Attributes
		allow  bool
		reason string
	}{
		{"pull secret", res("get", "", "secrets", "", "a", "pull"), true, ""},
		{"env secret", res("watch", "", "secrets", "", "a", "envsecret"), true, ""},
		{"envFrom configmap", res("get", "", "configmaps", "", "a", "env"), true, ""},
		{"projected configmap", res("list", "", "configmaps", "", "a", "proj"), true, ""},
		{"claim", res("get", "", "persistentvolumeclaims", "", "a", "data"), true, ""},
		{"claim's volume", res("get", "", "persistentvolumes", "", "", "pv1"), true, ""},
		{"resource claim", res("get", "resource.k8s.io", "resourceclaims", "", "a", "c1"), true, ""},
		{"service account", res("get", "", "serviceaccounts", "", "a", "sa1"), true, ""},
		{"service account token", res("create", "", "serviceaccounts", "token", "a", "sa1"), true, ""},
		{"own pod", res("get", "", "pods", "", "a", "p1"), true, ""},
		{"pods by node", Attributes{User: n1, Verb: "watch", ResourceRequest: true, Resource: "pods", FieldSelector: byNode}, true, ""},
		{"own node", res("get", "", "nodes", "", "", "n1"), true, ""},
		{"own lease", res("update", "coordination.k8s.io", "leases", "", "kube-node-lease", "n1"), true, ""},
		{"services (node rules)", res("list", "", "services", "", "", ""), true, ""},
		{"token review (node rules)", res("create", "authentication.k8s.io", "tokenreviews", "", "", ""), true, ""},
		{"csr (node rules)", res("create", "certificates.k8s.io", "certificatesigningrequests", "", "", ""), true, ""},

		{"another node's secret", res("get", "", "secrets", "", "a", "other"), false, "no relationship found between node 'n1' and this object"},
		{"unbound pod's secret", res("get", "", "secrets", "", "a", "unbound"), false, "no relationship found between node 'n1' and this object"},
		{"every secret", res("list", "", "secrets", "", "a", ""), false, "No Object name found"},
		{"secret write", res("update", "", "secrets", "", "a", "pull"), false, "can only read resources of this type"},
		{"list claims", res("list", "", "persistentvolumeclaims", "", "a", ""), false, "can only get individual resources of this type"},
		{"another pod", res("get", "", "pods", "", "a", "p2"), false, "no relationship found between node 'n1' and this object"},
		{"every pod", res("list", "", "pods", "", "", ""), false, "can only list/watch pods with spec.nodeName field selector"},
		{"another node", res("get", "", "nodes", "", "", "n2"), false, "node 'n1' cannot read 'n2', only its own Node object"},
		{"every node", res("list", "", "nodes", "", "", ""), false, "node 'n1' cannot read all nodes, only its own Node object"},
		{"another lease", res("get", "coordination.k8s.io", "leases", "", "kube-node-lease", "n2"), false,
			"can only access node lease with the same name as the requesting node"},
		{"deployments", res("list", "apps", "deployments", "", "", ""), false, ""},
		{"own volume attachment", res("get", "storage.k8s.io", "volumeattachments", "", "", "va1"), true, ""},
		{"another volume attachment", res("get", "storage.k8s.io", "volumeattachments", "", "", "va2"), false,
			"no relationship found between node 'n1' and this object"},
		{"own resource slice", res("update", "resource.k8s.io", "resourceslices", "", "", "rs1"), true, ""},
		{"slices by node", Attributes{User: n1, Verb: "deletecollection", ResourceRequest: true, APIGroup: "resource.k8s.io",
			Resource: "resourceslices", FieldSelector: byNode}, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ok, why, err := z.Authorize(t.Context(), c.a)
			if err != nil || ok != c.allow || why != c.reason {
				t.Errorf("Authorize = %v %q %v, want %v %q", ok, why, err, c.allow, c.reason)
			}
		})
	}
	t.Run("not a node", func(t *testing.T) {
		a := res("get", "", "secrets", "", "a", "pull")
		a.User = &User{Name: "system:node:n1"} // without the group
		if ok, why, _ := z.Authorize(t.Context(), a); ok || why != "" {
			t.Errorf("a user named like a node: %v %q, want no opinion", ok, why)
		}
	})
}

func TestPodReferences(t *testing.T) {
	p := &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "x"}}}},
		{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}}}
	if got := PodReferences(p); len(got) != 1 || got[0] != "configmaps" {
		t.Errorf("PodReferences = %v, want [configmaps]", got)
	}
	if got := PodReferences(&corev1.Pod{}); len(got) != 0 {
		t.Errorf("PodReferences of an empty pod = %v", got)
	}
}
