package registry

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// highestUserPriority is the highest value of a PriorityClass that is not
// one of kube's system classes.
const highestUserPriority = 1000000000

// validatePriorityClass: user classes stay at or below 1e9 and may not
// take the system- prefix unless they are one of the system classes
// exactly (systemPriorityClasses); the value and preemption policy never
// change.
func validatePriorityClass(obj, old runtime.Object) field.ErrorList {
	pc := obj.(*schedulingv1.PriorityClass)
	var errs field.ErrorList
	if prev, ok := old.(*schedulingv1.PriorityClass); ok {
		if pc.Value != prev.Value {
			errs = append(errs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
		}
		return append(errs, validation.ValidateImmutableField(pc.PreemptionPolicy, prev.PreemptionPolicy,
			field.NewPath("preemptionPolicy"))...)
	}
	switch {
	case strings.HasPrefix(pc.Name, "system-"):
		if err := knownSystemPriorityClass(pc); err != nil {
			errs = append(errs, field.Forbidden(field.NewPath("metadata", "name"),
				"priority class names with 'system-' prefix are reserved for system use only. error: "+err.Error()))
		}
	case pc.Value > highestUserPriority:
		errs = append(errs, field.Forbidden(field.NewPath("value"),
			fmt.Sprintf("maximum allowed value of a user defined priority is %v", highestUserPriority)))
	}
	if p := pc.PreemptionPolicy; p != nil && *p != corev1.PreemptLowerPriority && *p != corev1.PreemptNever {
		errs = append(errs, field.NotSupported(field.NewPath("preemptionPolicy"), *p,
			[]corev1.PreemptionPolicy{corev1.PreemptLowerPriority, corev1.PreemptNever}))
	}
	return errs
}
