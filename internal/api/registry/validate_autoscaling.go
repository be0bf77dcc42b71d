package registry

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateHorizontalPodAutoscaler: minReplicas at least 1, maxReplicas set
// and not below minReplicas, a scale target with a kind and a name.
func validateHorizontalPodAutoscaler(obj, _ runtime.Object) field.ErrorList {
	hpa := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	spec := field.NewPath("spec")
	sp := &hpa.Spec
	var errs field.ErrorList
	if sp.MinReplicas != nil && *sp.MinReplicas < 1 {
		errs = append(errs, field.Invalid(spec.Child("minReplicas"), *sp.MinReplicas, "must be greater than or equal to 1"))
	}
	switch {
	case sp.MaxReplicas == 0:
		errs = append(errs, field.Required(spec.Child("maxReplicas"), "must be set and greater than 0"))
	case sp.MaxReplicas < 0:
		errs = append(errs, field.Invalid(spec.Child("maxReplicas"), sp.MaxReplicas, "must be greater than or equal to 1"))
	}
	if sp.MinReplicas != nil && sp.MaxReplicas < *sp.MinReplicas {
		errs = append(errs, field.Invalid(spec.Child("maxReplicas"), sp.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	ref := spec.Child("scaleTargetRef")
	for _, f := range []struct{ name, value string }{{"kind", sp.ScaleTargetRef.Kind}, {"name", sp.ScaleTargetRef.Name}} {
		if f.value == "" {
			errs = append(errs, field.Required(ref.Child(f.name), ""))
			continue
		}
		for _, msg := range path.IsValidPathSegmentName(f.value) {
			errs = append(errs, field.Invalid(ref.Child(f.name), f.value, msg))
		}
	}
	return errs
}
