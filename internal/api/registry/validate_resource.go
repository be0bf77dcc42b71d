package registry

import (
	"fmt"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The rules of kube's resource.k8s.io validation that decide whether a
// ResourceSlice can be found (driver, pool, node) and what never changes.
// The device lists themselves (attributes, capacities, counters) are not
// checked here.

// validateResourceSlice: a driver, a pool and exactly one of nodeName,
// nodeSelector, allNodes and perDeviceNodeSelection; the driver, pool
// name and node name never change.
func validateResourceSlice(obj, old runtime.Object) field.ErrorList {
	sp := &obj.(*resourcev1.ResourceSlice).Spec
	spec := field.NewPath("spec")
	errs := csiDriverName(sp.Driver, spec.Child("driver"))
	errs = append(errs, poolName(sp.Pool.Name, spec.Child("pool", "name"))...)
	if sp.Pool.ResourceSliceCount <= 0 {
		errs = append(errs, field.Invalid(spec.Child("pool", "resourceSliceCount"), sp.Pool.ResourceSliceCount, "must be greater than zero"))
	}
	if sp.Pool.Generation < 0 {
		errs = append(errs, field.Invalid(spec.Child("pool", "generation"), sp.Pool.Generation, "must be greater than or equal to zero"))
	}
	if prev, ok := old.(*resourcev1.ResourceSlice); ok {
		errs = append(errs, validation.ValidateImmutableField(sp.Pool.Name, prev.Spec.Pool.Name, spec.Child("pool", "name"))...)
		errs = append(errs, validation.ValidateImmutableField(sp.Driver, prev.Spec.Driver, spec.Child("driver"))...)
		errs = append(errs, validation.ValidateImmutableField(sp.NodeName, prev.Spec.NodeName, spec.Child("nodeName"))...)
	}
	return append(errs, sliceNodes(sp, spec)...)
}

// sliceNodes checks that a slice says, one way only, which nodes its
// devices are on.
func sliceNodes(sp *resourcev1.ResourceSliceSpec, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	var set []string
	switch n := sp.NodeName; {
	case n != nil && *n == "":
		errs = append(errs, field.Invalid(spec.Child("nodeName"), *n, "must be either unset or set to a non-empty string"))
	case n != nil:
		set = append(set, "`nodeName`")
		for _, msg := range validation.NameIsDNSSubdomain(*n, false) {
			errs = append(errs, field.Invalid(spec.Child("nodeName"), *n, msg))
		}
	}
	if ns := sp.NodeSelector; ns != nil {
		set = append(set, "`nodeSelector`")
		if len(ns.NodeSelectorTerms) != 1 {
			errs = append(errs, field.Invalid(spec.Child("nodeSelector", "nodeSelectorTerms"), ns.NodeSelectorTerms,
				"must have exactly one node selector term"))
		}
	}
	for _, b := range []struct {
		name string
		v    *bool
	}{{"allNodes", sp.AllNodes}, {"perDeviceNodeSelection", sp.PerDeviceNodeSelection}} {
		switch {
		case b.v != nil && *b.v:
			set = append(set, "`"+b.name+"`")
		case b.v != nil:
			errs = append(errs, field.Invalid(spec.Child(b.name), false, "must be either unset or set to true"))
		}
	}
	const oneOf = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
	switch len(set) {
	case 0:
		errs = append(errs, field.Required(spec, oneOf))
	case 1:
	default:
		errs = append(errs, field.Invalid(spec, fmt.Sprintf("{%s}", strings.Join(set, ", ")), oneOf+", but multiple fields are set"))
	}
	return errs
}

// poolName is kube's validatePoolName: DNS subdomains separated by "/",
// at most 253 characters in all.
func poolName(name string, path *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	if len(name) > resourcev1.PoolNameMaxLength {
		errs = append(errs, field.TooLong(path, "", resourcev1.PoolNameMaxLength))
	}
	for _, part := range strings.Split(name, "/") {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(part) {
			errs = append(errs, field.Invalid(path, part, msg))
		}
	}
	return errs
}

// validateResourceClaim: the spec of a claim never changes (its status
// does, through /status).
func validateResourceClaim(obj, old runtime.Object) field.ErrorList {
	prev, ok := old.(*resourcev1.ResourceClaim)
	if !ok {
		return nil
	}
	return validation.ValidateImmutableField(obj.(*resourcev1.ResourceClaim).Spec, prev.Spec, field.NewPath("spec"))
}

// validateResourceClaimTemplate: the spec of a template never changes.
func validateResourceClaimTemplate(obj, old runtime.Object) field.ErrorList {
	prev, ok := old.(*resourcev1.ResourceClaimTemplate)
	if !ok {
		return nil
	}
	return validation.ValidateImmutableField(obj.(*resourcev1.ResourceClaimTemplate).Spec, prev.Spec, field.NewPath("spec"))
}

// validateDeviceTaintRule: the taint has a label-name key and a known
// effect (checked when the effect is new or changed, as kube does).
func validateDeviceTaintRule(obj, old runtime.Object) field.ErrorList {
	t := obj.(*resourcev1.DeviceTaintRule).Spec.Taint
	path := field.NewPath("spec", "taint")
	errs := metav1validation.ValidateLabelName(t.Key, path.Child("key"))
	if t.Value != "" {
		for _, msg := range utilvalidation.IsValidLabelValue(t.Value) {
			errs = append(errs, field.Invalid(path.Child("value"), t.Value, msg))
		}
	}
	if prev, ok := old.(*resourcev1.DeviceTaintRule); ok && prev.Spec.Taint.Effect == t.Effect {
		return errs
	}
	switch t.Effect {
	case "":
		errs = append(errs, field.Required(path.Child("effect"), ""))
	case resourcev1.DeviceTaintEffectNoSchedule, resourcev1.DeviceTaintEffectNoExecute, resourcev1.DeviceTaintEffectNone:
	default:
		errs = append(errs, field.NotSupported(path.Child("effect"), t.Effect, []resourcev1.DeviceTaintEffect{
			resourcev1.DeviceTaintEffectNoExecute, resourcev1.DeviceTaintEffectNoSchedule, resourcev1.DeviceTaintEffectNone}))
	}
	return errs
}
