package api

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
