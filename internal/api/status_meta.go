package api

import (
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// statusResetsMeta lists the built-in kinds whose kube status strategy
// calls metav1.ResetObjectMetaForStatus: a status update of them changes
// no metadata. Every other built-in kind's status strategy keeps the
// metadata the request sends (a status patch may add an annotation, as
// the e2e lifecycle specs do); custom resources keep the stored metadata.
var statusResetsMeta = map[string]bool{
	"PodCertificateRequest": true, "ServiceCIDR": true, "ResourceClaim": true, "DeviceTaintRule": true,
	"ResourcePoolStatusRequest": true, "StorageVersion": true, "VolumeAttachment": true, "CSINode": true,
	"FlowSchema": true, "PriorityLevelConfiguration": true, "ValidatingAdmissionPolicy": true,
	"PodGroup": true, "CompositePodGroup": true, "Eviction": true, "EvictionRequest": true,
}

// statusKeepsMeta sets out's (the stored object's) labels, annotations,
// finalizers and owner references to those of the status update m, as
// kube's status strategy of out's kind does: pods keep their owner
// references and deployments their labels.
func statusKeepsMeta(out runtime.Object, om, m metav1.Object) {
	if _, ok := out.(*unstructured.Unstructured); ok {
		return
	}
	if t := reflect.TypeOf(out); t.Kind() != reflect.Pointer || statusResetsMeta[t.Elem().Name()] {
		return
	}
	om.SetAnnotations(m.GetAnnotations())
	om.SetFinalizers(m.GetFinalizers())
	if _, ok := out.(*appsv1.Deployment); !ok {
		om.SetLabels(m.GetLabels())
	}
	if _, ok := out.(*corev1.Pod); !ok {
		om.SetOwnerReferences(m.GetOwnerReferences())
	}
}
