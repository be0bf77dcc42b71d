package registry

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// defaultStorageClass: volumes are deleted with their claim and bound at
// once.
func defaultStorageClass(obj runtime.Object) {
	sc := obj.(*storagev1.StorageClass)
	sc.ReclaimPolicy = defaultPtr(sc.ReclaimPolicy, corev1.PersistentVolumeReclaimDelete)
	sc.VolumeBindingMode = defaultPtr(sc.VolumeBindingMode, storagev1.VolumeBindingImmediate)
}

// defaultCSIDriver is SetDefaults_CSIDriver with kube 1.37's default
// feature gates (SELinuxMountReadWriteOncePod GA, VolumeLimitScaling beta,
// both on).
func defaultCSIDriver(obj runtime.Object) {
	sp := &obj.(*storagev1.CSIDriver).Spec
	sp.AttachRequired = defaultPtr(sp.AttachRequired, true)
	sp.PodInfoOnMount = defaultPtr(sp.PodInfoOnMount, false)
	sp.StorageCapacity = defaultPtr(sp.StorageCapacity, false)
	sp.FSGroupPolicy = defaultPtr(sp.FSGroupPolicy, storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy)
	if len(sp.VolumeLifecycleModes) == 0 {
		sp.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}
	}
	sp.RequiresRepublish = defaultPtr(sp.RequiresRepublish, false)
	sp.SELinuxMount = defaultPtr(sp.SELinuxMount, false)
	sp.PreventPodSchedulingIfMissing = defaultPtr(sp.PreventPodSchedulingIfMissing, false)
}

// defaultVolumeAttachment is kube's SetObjectDefaults_VolumeAttachment for
// the volume sources a CSI migration can inline (the spec is not a
// PersistentVolume's: no reclaim policy or volume mode defaults). The
// in-tree sources kube 1.37 no longer mounts (RBD, ScaleIO, …) are left
// as sent.
func defaultVolumeAttachment(obj runtime.Object) {
	pvs := obj.(*storagev1.VolumeAttachment).Spec.Source.InlineVolumeSpec
	if pvs == nil {
		return
	}
	if hp := pvs.HostPath; hp != nil {
		hp.Type = defaultPtr(hp.Type, corev1.HostPathUnset)
	}
}

// prepareVolumeAttachment: a new attachment has no status (the attacher
// sets it through /status).
func prepareVolumeAttachment(obj runtime.Object) {
	obj.(*storagev1.VolumeAttachment).Status = storagev1.VolumeAttachmentStatus{}
}

// prepareCSINode: a new CSINode has no status.
func prepareCSINode(obj runtime.Object) {
	obj.(*storagev1.CSINode).Status = storagev1.CSINodeStatus{}
}
