package registry

import (
	"reflect"
	"strings"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
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

// csiDriverName is kube's ValidateCSIDriverName: a required lowercase DNS
// subdomain of at most 63 characters.
func csiDriverName(name string, path *field.Path) field.ErrorList {
	switch {
	case name == "":
		return field.ErrorList{field.Required(path, "")}
	case len(name) > 63:
		return field.ErrorList{field.TooLong(path, "", 63)}
	}
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsDNS1123Subdomain(strings.ToLower(name)) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

// validateCSIDriver: the name is a CSI driver name; whether attaching is
// required and the lifecycle modes never change (kube's
// ValidateCSIDriverUpdate).
func validateCSIDriver(obj, old runtime.Object) field.ErrorList {
	d := obj.(*storagev1.CSIDriver)
	spec := field.NewPath("spec")
	errs := csiDriverName(d.Name, field.NewPath("metadata", "name"))
	if prev, ok := old.(*storagev1.CSIDriver); ok {
		// kube names the first path "attachedRequired".
		errs = append(errs, validation.ValidateImmutableField(d.Spec.AttachRequired, prev.Spec.AttachRequired,
			spec.Child("attachedRequired"))...)
		errs = append(errs, validation.ValidateImmutableField(d.Spec.VolumeLifecycleModes, prev.Spec.VolumeLifecycleModes,
			spec.Child("volumeLifecycleModes"))...)
	}
	return errs
}

// validateCSINode: every driver has a CSI driver name (each once) and a
// node ID; an existing driver's entry changes only in its allocatable
// count (kube 1.37: MutableCSINodeAllocatableCount is GA).
func validateCSINode(obj, old runtime.Object) field.ErrorList {
	n := obj.(*storagev1.CSINode)
	drivers := field.NewPath("spec", "drivers")
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, d := range n.Spec.Drivers {
		p := drivers.Index(i)
		errs = append(errs, csiDriverName(d.Name, p.Child("name"))...)
		if seen[d.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), d.Name))
		}
		seen[d.Name] = true
		switch {
		case d.NodeID == "":
			errs = append(errs, field.Required(p.Child("nodeID"), "nodeID must not be empty"))
		case len(d.NodeID) > 192:
			errs = append(errs, field.TooLong(p.Child("nodeID"), d.NodeID, 192))
		}
		if a := d.Allocatable; a != nil && a.Count != nil && *a.Count < 0 {
			errs = append(errs, field.Invalid(p.Child("allocatable", "count"), *a.Count, "must be greater than or equal to 0"))
		}
	}
	prev, ok := old.(*storagev1.CSINode)
	if !ok {
		return errs
	}
	for _, od := range prev.Spec.Drivers {
		for _, nd := range n.Spec.Drivers {
			if od.Name != nd.Name {
				continue
			}
			od.Allocatable, nd.Allocatable = nil, nil
			errs = append(errs, validation.ValidateImmutableField(nd, od, drivers)...)
		}
	}
	return errs
}

// validateCSIStorageCapacity: a storage class name; the topology and the
// class never change.
func validateCSIStorageCapacity(obj, old runtime.Object) field.ErrorList {
	c := obj.(*storagev1.CSIStorageCapacity)
	var errs field.ErrorList
	errs = append(errs, metav1validation.ValidateLabelSelector(c.NodeTopology, metav1validation.LabelSelectorValidationOptions{},
		field.NewPath("nodeTopology"))...)
	for _, msg := range validation.NameIsDNSSubdomain(c.StorageClassName, false) {
		errs = append(errs, field.Invalid(field.NewPath("storageClassName"), c.StorageClassName, msg))
	}
	if c.Capacity != nil && c.Capacity.Sign() < 0 {
		errs = append(errs, field.Invalid(field.NewPath("capacity"), c.Capacity.String(), "must be greater than or equal to 0"))
	}
	if prev, ok := old.(*storagev1.CSIStorageCapacity); ok {
		if !reflect.DeepEqual(c.NodeTopology, prev.NodeTopology) {
			errs = append(errs, field.Invalid(field.NewPath("nodeTopology"), c.NodeTopology, "field is immutable"))
		}
		if c.StorageClassName != prev.StorageClassName {
			errs = append(errs, field.Invalid(field.NewPath("storageClassName"), c.StorageClassName, "field is immutable"))
		}
	}
	return errs
}

// validateVolumeAttachment: an attacher, a node and exactly one source;
// the spec never changes (only the status does).
func validateVolumeAttachment(obj, old runtime.Object) field.ErrorList {
	va := obj.(*storagev1.VolumeAttachment)
	spec := field.NewPath("spec")
	errs := csiDriverName(va.Spec.Attacher, spec.Child("attacher"))
	src := spec.Child("source")
	switch s := va.Spec.Source; {
	case s.InlineVolumeSpec == nil && s.PersistentVolumeName == nil:
		errs = append(errs, field.Required(src, "must specify exactly one of inlineVolumeSpec and persistentVolumeName"))
	case s.InlineVolumeSpec != nil && s.PersistentVolumeName != nil:
		errs = append(errs, field.Forbidden(src, "must specify exactly one of inlineVolumeSpec and persistentVolumeName"))
	case s.PersistentVolumeName != nil && *s.PersistentVolumeName == "":
		errs = append(errs, field.Required(src.Child("persistentVolumeName"), "must specify non empty persistentVolumeName"))
	}
	if va.Spec.NodeName == "" {
		errs = append(errs, field.Required(spec.Child("nodeName"), ""))
	} else {
		for _, msg := range validation.NameIsDNSSubdomain(va.Spec.NodeName, false) {
			errs = append(errs, field.Invalid(spec.Child("nodeName"), va.Spec.NodeName, msg))
		}
	}
	if prev, ok := old.(*storagev1.VolumeAttachment); ok {
		errs = append(errs, validation.ValidateImmutableField(va.Spec, prev.Spec, spec)...)
	}
	return errs
}

// validateVolumeAttributesClass: a driver name; the driver and the
// parameters never change.
func validateVolumeAttributesClass(obj, old runtime.Object) field.ErrorList {
	c := obj.(*storagev1.VolumeAttributesClass)
	var errs field.ErrorList
	if c.DriverName == "" {
		errs = append(errs, field.Required(field.NewPath("driverName"), ""))
	}
	if prev, ok := old.(*storagev1.VolumeAttributesClass); ok {
		if c.DriverName != prev.DriverName {
			errs = append(errs, field.Forbidden(field.NewPath("driverName"), "updates to driverName are forbidden."))
		}
		if !reflect.DeepEqual(c.Parameters, prev.Parameters) {
			errs = append(errs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
		}
	}
	return errs
}
