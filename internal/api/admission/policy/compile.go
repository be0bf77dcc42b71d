package policy

import (
	arv1 "k8s.io/api/admissionregistration/v1"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"
)

// compile turns a policy into kube's Validator: variables through kube's
// CompositedCompiler (so that `variables.<name>` is typed and evaluated
// lazily once per request), then matchConditions, validations,
// messageExpressions and auditAnnotations. Stored policies compile in
// kube's StoredExpressions environment (what kube does at admission time);
// a compile error makes every validation answer with the policy's
// failurePolicy, as kube's.
func compile(env *environment.EnvSet, p *arv1.ValidatingAdmissionPolicy) validating.Validator {
	hasParams := p.Spec.ParamKind != nil
	withAuthz := plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: true}
	noAuthz := plugincel.OptionalVariableDeclarations{HasParams: hasParams}
	fp := p.Spec.FailurePolicy
	c, err := plugincel.NewCompositedCompiler(env)
	if err != nil {
		return validating.NewValidator(nil, nil, nil, nil, fp, err)
	}
	vars := make([]plugincel.NamedExpressionAccessor, len(p.Spec.Variables))
	for i, v := range p.Spec.Variables {
		vars[i] = &validating.Variable{Name: v.Name, Expression: v.Expression}
	}
	c.CompileAndStoreVariables(vars, withAuthz, environment.StoredExpressions)

	var matcher matchconditions.Matcher
	if mcs := p.Spec.MatchConditions; len(mcs) > 0 {
		acc := make([]plugincel.ExpressionAccessor, len(mcs))
		for i := range mcs {
			acc[i] = (*matchconditions.MatchCondition)(&mcs[i])
		}
		matcher = matchconditions.NewMatcher(c.CompileCondition(acc, withAuthz, environment.StoredExpressions),
			fp, "policy", "validate", p.Name)
	}
	validations := make([]plugincel.ExpressionAccessor, len(p.Spec.Validations))
	messages := make([]plugincel.ExpressionAccessor, len(p.Spec.Validations))
	for i, v := range p.Spec.Validations {
		validations[i] = &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}
		if v.MessageExpression != "" {
			messages[i] = &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
		}
	}
	audits := make([]plugincel.ExpressionAccessor, len(p.Spec.AuditAnnotations))
	for i, a := range p.Spec.AuditAnnotations {
		audits[i] = &validating.AuditAnnotationCondition{Key: a.Key, ValueExpression: a.ValueExpression}
	}
	return validating.NewValidator(
		c.CompileCondition(validations, withAuthz, environment.StoredExpressions),
		matcher,
		c.CompileCondition(audits, withAuthz, environment.StoredExpressions),
		c.CompileCondition(messages, noAuthz, environment.StoredExpressions),
		fp, nil)
}
