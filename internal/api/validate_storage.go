package api

import (
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateStorageClass: a provisioner is required; parameters,
// provisioner, reclaim policy and binding mode never change.
func validateStorageClass(obj, old runtime.Object) field.ErrorList {
	sc := obj.(*storagev1.StorageClass)
	var errs field.ErrorList
	if prev, ok := old.(*storagev1.StorageClass); ok {
		errs = append(errs, validation.ValidateImmutableField(sc.Parameters, prev.Parameters, field.NewPath("parameters"))...)
		errs = append(errs, validation.ValidateImmutableField(sc.Provisioner, prev.Provisioner, field.NewPath("provisioner"))...)
		errs = append(errs, validation.ValidateImmutableField(sc.ReclaimPolicy, prev.ReclaimPolicy, field.NewPath("reclaimPolicy"))...)
		errs = append(errs, validation.ValidateImmutableField(sc.VolumeBindingMode, prev.VolumeBindingMode,
			field.NewPath("volumeBindingMode"))...)
	}
	if sc.Provisioner == "" {
		errs = append(errs, field.Required(field.NewPath("provisioner"), ""))
	}
	return errs
}
