package validation

import (
	"strings"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// Policy checks a ValidatingAdmissionPolicy on create (old nil) and
// update: expressions that old already holds compile in the stored
// environment, new ones in the stricter new-expressions one.
func Policy(p, old *arv1.ValidatingAdmissionPolicy) field.ErrorList {
	stored := storedExpressions(old)
	spec := &p.Spec
	fld := field.NewPath("spec")
	var errs field.ErrorList
	if spec.FailurePolicy == nil {
		errs = append(errs, field.Required(fld.Child("failurePolicy"), ""))
	} else if fp := *spec.FailurePolicy; fp != arv1.Fail && fp != arv1.Ignore {
		errs = append(errs, field.NotSupported(fld.Child("failurePolicy"), fp, []string{string(arv1.Fail), string(arv1.Ignore)}))
	}
	if spec.ParamKind != nil {
		if spec.ParamKind.APIVersion == "" {
			errs = append(errs, field.Required(fld.Child("paramKind", "apiVersion"), ""))
		}
		if spec.ParamKind.Kind == "" {
			errs = append(errs, field.Required(fld.Child("paramKind", "kind"), ""))
		}
	}
	if spec.MatchConstraints == nil {
		errs = append(errs, field.Required(fld.Child("matchConstraints"), ""))
	} else {
		errs = append(errs, matchResources(spec.MatchConstraints, fld.Child("matchConstraints"))...)
		if len(spec.MatchConstraints.ResourceRules) == 0 {
			errs = append(errs, field.Required(fld.Child("matchConstraints", "resourceRules"), ""))
		}
	}
	if len(spec.Validations) == 0 && len(spec.AuditAnnotations) == 0 {
		const msg = "validations or auditAnnotations must contain at least one item"
		errs = append(errs, field.Required(fld.Child("validations"), msg), field.Required(fld.Child("auditAnnotations"), msg))
	}
	return append(errs, expressions(p, stored, fld)...)
}

// expressions compiles every CEL expression of p with kube's compilers.
func expressions(p *arv1.ValidatingAdmissionPolicy, stored sets.Set[string], fld *field.Path) field.ErrorList {
	spec := &p.Spec
	base := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
	var c plugincel.Compiler = plugincel.NewCompiler(base)
	composited, err := plugincel.NewCompositedCompiler(base)
	if err != nil {
		return field.ErrorList{field.InternalError(fld, err)}
	}
	if len(spec.Variables) > 0 {
		c = composited
	}
	envType := func(expr string) environment.Type {
		if stored.Has(expr) {
			return environment.StoredExpressions
		}
		return environment.NewExpressions
	}
	withAuthz := plugincel.OptionalVariableDeclarations{HasParams: spec.ParamKind != nil, HasAuthorizer: true}
	var errs field.ErrorList
	check := func(path *field.Path, acc plugincel.ExpressionAccessor, vars plugincel.OptionalVariableDeclarations) {
		if r := c.CompileCELExpression(acc, vars, envType(acc.GetExpression())); r.Error != nil {
			errs = append(errs, celError(path, acc, r.Error))
		}
	}
	for i := range spec.MatchConditions {
		mc := &spec.MatchConditions[i]
		path := fld.Child("matchConditions").Index(i)
		if mc.Name == "" {
			errs = append(errs, field.Required(path.Child("name"), ""))
		}
		if strings.TrimSpace(mc.Expression) == "" {
			errs = append(errs, field.Required(path.Child("expression"), ""))
			continue
		}
		// kube compiles matchConditions without the policy's variables
		acc := &matchconditions.MatchCondition{Expression: strings.TrimSpace(mc.Expression)}
		if r := plugincel.NewCompiler(base).CompileCELExpression(acc, withAuthz, envType(acc.Expression)); r.Error != nil {
			errs = append(errs, celError(path.Child("expression"), acc, r.Error))
		}
	}
	for i, v := range spec.Variables {
		path := fld.Child("variables").Index(i)
		if strings.TrimSpace(v.Name) == "" {
			errs = append(errs, field.Required(path.Child("name"), "name is not specified"))
		}
		if strings.TrimSpace(v.Expression) == "" {
			errs = append(errs, field.Required(path.Child("expression"), "expression is not specified"))
			continue
		}
		acc := &validating.Variable{Name: v.Name, Expression: v.Expression}
		if r := composited.CompileAndStoreVariable(acc, withAuthz, envType(v.Expression)); r.Error != nil {
			errs = append(errs, celError(path.Child("expression"), acc, r.Error))
		}
	}
	for i, v := range spec.Validations {
		path := fld.Child("validations").Index(i)
		if strings.TrimSpace(v.Expression) == "" {
			errs = append(errs, field.Required(path.Child("expression"), "expression is not specified"))
		} else {
			check(path.Child("expression"), &validating.ValidationCondition{Expression: v.Expression}, withAuthz)
		}
		if v.MessageExpression != "" {
			if strings.TrimSpace(v.MessageExpression) == "" {
				errs = append(errs, field.Invalid(path.Child("messageExpression"), v.MessageExpression, "must be non-empty if specified"))
			} else {
				check(path.Child("messageExpression"), &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression},
					plugincel.OptionalVariableDeclarations{HasParams: spec.ParamKind != nil})
			}
		}
		if strings.ContainsAny(strings.TrimSpace(v.Message), "\n\r") {
			errs = append(errs, field.Invalid(path.Child("message"), v.Message, "must not contain line breaks"))
		}
		if r := v.Reason; r != nil && !validReasons.Has(string(*r)) {
			errs = append(errs, field.NotSupported(path.Child("reason"), *r, sets.List(validReasons)))
		}
	}
	for i, a := range spec.AuditAnnotations {
		path := fld.Child("auditAnnotations").Index(i)
		if strings.TrimSpace(a.ValueExpression) == "" {
			errs = append(errs, field.Required(path.Child("valueExpression"), "valueExpression is not specified"))
			continue
		}
		acc := &validating.AuditAnnotationCondition{Key: a.Key, ValueExpression: strings.TrimSpace(a.ValueExpression)}
		if r := c.CompileCELExpression(acc, withAuthz, envType(a.ValueExpression)); r.Error != nil {
			errs = append(errs, celError(path.Child("valueExpression"), &validating.AuditAnnotationCondition{ValueExpression: a.ValueExpression}, r.Error))
		}
	}
	return errs
}

// validReasons are the reasons a validation may give (kube's list).
var validReasons = sets.New("Unauthorized", "Forbidden", "Invalid", "RequestEntityTooLarge")

// celError words a compile error as kube's validation does.
func celError(path *field.Path, acc plugincel.ExpressionAccessor, err *apiservercel.Error) *field.Error {
	switch err.Type {
	case apiservercel.ErrorTypeRequired:
		return field.Required(path, err.Detail)
	case apiservercel.ErrorTypeInvalid:
		return field.Invalid(path, acc.GetExpression(), err.Detail)
	}
	return field.InternalError(path, err)
}

// storedExpressions are the expressions old already holds.
func storedExpressions(old *arv1.ValidatingAdmissionPolicy) sets.Set[string] {
	s := sets.New[string]()
	if old == nil {
		return s
	}
	for _, v := range old.Spec.Validations {
		s.Insert(v.Expression, v.MessageExpression)
	}
	for _, v := range old.Spec.Variables {
		s.Insert(v.Expression)
	}
	for _, m := range old.Spec.MatchConditions {
		s.Insert(strings.TrimSpace(m.Expression))
	}
	for _, a := range old.Spec.AuditAnnotations {
		s.Insert(a.ValueExpression, strings.TrimSpace(a.ValueExpression))
	}
	return s
}

// matchResources checks the selectors and matchPolicy of m.
func matchResources(m *arv1.MatchResources, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if m.MatchPolicy == nil {
		errs = append(errs, field.Required(fld.Child("matchPolicy"), ""))
	} else if mp := *m.MatchPolicy; mp != arv1.Exact && mp != arv1.Equivalent {
		errs = append(errs, field.NotSupported(fld.Child("matchPolicy"), mp, []string{string(arv1.Equivalent), string(arv1.Exact)}))
	}
	if m.NamespaceSelector == nil {
		errs = append(errs, field.Required(fld.Child("namespaceSelector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(m.NamespaceSelector, metav1validation.LabelSelectorValidationOptions{}, fld.Child("namespaceSelector"))...)
	}
	if m.ObjectSelector == nil {
		errs = append(errs, field.Required(fld.Child("objectSelector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(m.ObjectSelector, metav1validation.LabelSelectorValidationOptions{}, fld.Child("objectSelector"))...)
	}
	return errs
}
