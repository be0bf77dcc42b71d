package validation

import (
	arv1 "k8s.io/api/admissionregistration/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Binding checks a ValidatingAdmissionPolicyBinding (create and update
// alike, as kube).
func Binding(b *arv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	spec := &b.Spec
	fld := field.NewPath("spec")
	var errs field.ErrorList
	if spec.PolicyName == "" {
		errs = append(errs, field.Required(fld.Child("policyName"), ""))
	}
	if pr := spec.ParamRef; pr != nil {
		errs = append(errs, paramRef(pr, fld.Child("paramRef"))...)
	}
	if spec.MatchResources != nil {
		errs = append(errs, matchResources(spec.MatchResources, fld.Child("matchResources"))...)
	}
	return append(errs, validationActions(spec.ValidationActions, fld.Child("validationActions"))...)
}

func paramRef(pr *arv1.ParamRef, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	const exclusive = `name and selector are mutually exclusive`
	if pr.Name != "" && pr.Selector != nil {
		errs = append(errs, field.Forbidden(fld.Child("name"), exclusive), field.Forbidden(fld.Child("selector"), exclusive))
	}
	if pr.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(pr.Selector, metav1validation.LabelSelectorValidationOptions{}, fld.Child("selector"))...)
	}
	if pr.Name == "" && pr.Selector == nil {
		errs = append(errs, field.Required(fld, `one of name or selector must be specified`))
	}
	switch a := pr.ParameterNotFoundAction; {
	case a == nil || *a == "":
		errs = append(errs, field.Required(fld.Child("parameterNotFoundAction"), ""))
	case *a != arv1.DenyAction && *a != arv1.AllowAction:
		errs = append(errs, field.NotSupported(fld.Child("parameterNotFoundAction"), pr.ParameterNotFoundAction,
			[]string{string(arv1.DenyAction), string(arv1.AllowAction)}))
	}
	return errs
}

var validActions = sets.New(string(arv1.Deny), string(arv1.Warn), string(arv1.Audit))

func validationActions(va []arv1.ValidationAction, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, a := range va {
		if !validActions.Has(string(a)) {
			errs = append(errs, field.NotSupported(fld.Index(i), a, sets.List(validActions)))
		}
		if seen.Has(string(a)) {
			errs = append(errs, field.Duplicate(fld.Index(i), a))
		}
		seen.Insert(string(a))
	}
	if seen.Has(string(arv1.Deny)) && seen.Has(string(arv1.Warn)) {
		errs = append(errs, field.Invalid(fld, va, "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	if len(seen) == 0 {
		errs = append(errs, field.Required(fld, "at least one validation action is required"))
	}
	return errs
}
