package registry

import (
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateRuntimeClass: the handler is a required DNS label that never
// changes; overhead quantities are not negative (kube's
// ValidateRuntimeClass and ValidateRuntimeClassUpdate).
func validateRuntimeClass(obj, old runtime.Object) field.ErrorList {
	rc := obj.(*nodev1.RuntimeClass)
	handler := field.NewPath("handler")
	var errs field.ErrorList
	if prev, ok := old.(*nodev1.RuntimeClass); ok {
		return validation.ValidateImmutableField(rc.Handler, prev.Handler, handler)
	}
	if rc.Handler == "" {
		errs = append(errs, field.Required(handler, ""))
	} else {
		for _, msg := range validation.NameIsDNSLabel(rc.Handler, false) {
			errs = append(errs, field.Invalid(handler, rc.Handler, msg))
		}
	}
	if rc.Overhead != nil {
		errs = append(errs, nonNegative(rc.Overhead.PodFixed, field.NewPath("overhead", "podFixed"))...)
	}
	return errs
}

// nonNegative checks that every quantity of rl is at least zero.
func nonNegative(rl corev1.ResourceList, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for name, q := range rl {
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(path.Key(string(name)), q.String(), "must be greater than or equal to 0"))
		}
	}
	return errs
}
