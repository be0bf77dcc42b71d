package registry

import (
	"strconv"
	"strings"

	policyv1 "k8s.io/api/policy/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validatePodDisruptionBudget: minAvailable or maxUnavailable, not both,
// each a non-negative count or a percentage up to 100%; a valid selector.
func validatePodDisruptionBudget(obj, _ runtime.Object) field.ErrorList {
	pdb := obj.(*policyv1.PodDisruptionBudget)
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if pdb.Spec.MinAvailable != nil && pdb.Spec.MaxUnavailable != nil {
		errs = append(errs, field.Invalid(spec, pdb.Spec, "minAvailable and maxUnavailable cannot be both set"))
	}
	if v := pdb.Spec.MinAvailable; v != nil {
		errs = append(errs, validateIntOrPercent(*v, spec.Child("minAvailable"))...)
	}
	if v := pdb.Spec.MaxUnavailable; v != nil {
		errs = append(errs, validateIntOrPercent(*v, spec.Child("maxUnavailable"))...)
	}
	errs = append(errs, metav1validation.ValidateLabelSelector(pdb.Spec.Selector, metav1validation.LabelSelectorValidationOptions{},
		spec.Child("selector"))...)
	if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil && *p != policyv1.IfHealthyBudget && *p != policyv1.AlwaysAllow {
		errs = append(errs, field.NotSupported(spec.Child("unhealthyPodEvictionPolicy"), *p,
			[]policyv1.UnhealthyPodEvictionPolicyType{policyv1.AlwaysAllow, policyv1.IfHealthyBudget}))
	}
	return errs
}

// validateIntOrPercent is kube's ValidatePositiveIntOrPercent followed by
// IsNotMoreThan100Percent.
func validateIntOrPercent(v intstr.IntOrString, path *field.Path) field.ErrorList {
	if v.Type == intstr.Int {
		return validateNonnegative(int64(v.IntValue()), path)
	}
	var errs field.ErrorList
	msgs := utilvalidation.IsValidPercent(v.StrVal)
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(path, v, msg))
	}
	if len(msgs) == 0 {
		if n, _ := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%")); n > 100 {
			errs = append(errs, field.Invalid(path, v, "must not be greater than 100%"))
		}
	}
	return errs
}
