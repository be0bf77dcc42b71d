package registry

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Defaults of the core/v1 kinds added to the first ones (defaults.go):
// Endpoints, PersistentVolumeClaim, PersistentVolume, LimitRange,
// ResourceQuota, PodTemplate and ReplicationController.

// Finalizers kube's StorageObjectInUseProtection admission adds to every
// new claim and volume.
const (
	pvcProtectionFinalizer = "kubernetes.io/pvc-protection"
	pvProtectionFinalizer  = "kubernetes.io/pv-protection"
)

func defaultEndpoints(obj runtime.Object) {
	ep := obj.(*corev1.Endpoints)
	for i := range ep.Subsets {
		for j := range ep.Subsets[i].Ports {
			defaultString(&ep.Subsets[i].Ports[j].Protocol, corev1.ProtocolTCP)
		}
	}
}

// preparePersistentVolumeClaim: a create cannot set status (a new claim
// is Pending) and the claim gets the pvc-protection finalizer.
func preparePersistentVolumeClaim(obj runtime.Object) {
	pvc := obj.(*corev1.PersistentVolumeClaim)
	pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}
	addFinalizer(&pvc.ObjectMeta.Finalizers, pvcProtectionFinalizer)
}

func defaultPersistentVolumeClaim(obj runtime.Object) {
	pvc := obj.(*corev1.PersistentVolumeClaim)
	defaultString(&pvc.Status.Phase, corev1.ClaimPending)
	pvc.Spec.VolumeMode = defaultPtr(pvc.Spec.VolumeMode, corev1.PersistentVolumeFilesystem)
}

// preparePersistentVolume: a new volume is Pending since its creation
// time and gets the pv-protection finalizer.
func preparePersistentVolume(obj runtime.Object) {
	pv := obj.(*corev1.PersistentVolume)
	created := pv.CreationTimestamp
	pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumePending, LastPhaseTransitionTime: &created}
	addFinalizer(&pv.ObjectMeta.Finalizers, pvProtectionFinalizer)
}

func defaultPersistentVolume(obj runtime.Object) {
	pv := obj.(*corev1.PersistentVolume)
	defaultString(&pv.Status.Phase, corev1.VolumePending)
	defaultString(&pv.Spec.PersistentVolumeReclaimPolicy, corev1.PersistentVolumeReclaimRetain)
	pv.Spec.VolumeMode = defaultPtr(pv.Spec.VolumeMode, corev1.PersistentVolumeFilesystem)
	if hp := pv.Spec.HostPath; hp != nil {
		hp.Type = defaultPtr(hp.Type, corev1.HostPathUnset)
	}
}

// defaultLimitRange: a container limit without a default limit takes its
// max; without a default request, its default limit, else its min.
func defaultLimitRange(obj runtime.Object) {
	lr := obj.(*corev1.LimitRange)
	for i := range lr.Spec.Limits {
		item := &lr.Spec.Limits[i]
		if item.Type != corev1.LimitTypeContainer {
			continue
		}
		if item.Default == nil {
			item.Default = corev1.ResourceList{}
		}
		if item.DefaultRequest == nil {
			item.DefaultRequest = corev1.ResourceList{}
		}
		fillResources(item.Default, item.Max)
		fillResources(item.DefaultRequest, item.Default)
		fillResources(item.DefaultRequest, item.Min)
	}
}

// fillResources copies into dst the resources of src it does not have.
func fillResources(dst, src corev1.ResourceList) {
	for name, q := range src {
		if _, ok := dst[name]; !ok {
			dst[name] = q.DeepCopy()
		}
	}
}

// prepareResourceQuota: a create cannot set status.
func prepareResourceQuota(obj runtime.Object) {
	obj.(*corev1.ResourceQuota).Status = corev1.ResourceQuotaStatus{}
}

func defaultPodTemplate(obj runtime.Object) {
	defaultPodSpec(&obj.(*corev1.PodTemplate).Template.Spec)
}

// prepareReplicationController: a create cannot set status.
func prepareReplicationController(obj runtime.Object) {
	obj.(*corev1.ReplicationController).Status = corev1.ReplicationControllerStatus{}
}

// defaultReplicationController: the selector and the controller's labels
// default to the template's labels; replicas to 1.
func defaultReplicationController(obj runtime.Object) {
	rc := obj.(*corev1.ReplicationController)
	rc.Spec.Replicas = defaultInt32(rc.Spec.Replicas, 1)
	t := rc.Spec.Template
	if t == nil {
		return
	}
	if t.Labels != nil {
		if len(rc.Spec.Selector) == 0 {
			rc.Spec.Selector = maps.Clone(t.Labels)
		}
		if len(rc.Labels) == 0 {
			rc.Labels = maps.Clone(t.Labels)
		}
	}
	defaultPodSpec(&t.Spec)
}

// addFinalizer appends f to *fs unless it is there.
func addFinalizer(fs *[]string, f string) {
	for _, have := range *fs {
		if have == f {
			return
		}
	}
	*fs = append(*fs, f)
}

// defaultPtr returns p, or a pointer to v when p is nil.
func defaultPtr[T any](p *T, v T) *T {
	if p != nil {
		return p
	}
	return &v
}

// defaultString sets *s to v when it is empty.
func defaultString[S ~string](s *S, v S) {
	if *s == "" {
		*s = v
	}
}
