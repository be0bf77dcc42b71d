package crdvalidation

import (
	"context"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
)

// Rules are the compiled x-kubernetes-validations of one CRD version.
type Rules struct {
	schema    *structuralschema.Structural
	validator *cel.Validator
}

// Compile compiles the rules of the structural schema s; nil when s has
// none (the common case, which then costs nothing per write). A rule that
// does not compile (a CRD stored before it was refused) is reported by
// Validate as kube reports it, on every object.
func Compile(s *structuralschema.Structural) *Rules {
	if s == nil {
		return nil
	}
	v := cel.NewValidator(s, true, celconfig.PerCallLimit)
	if v == nil {
		return nil
	}
	return &Rules{schema: s, validator: v}
}

// Validate evaluates the rules on obj, a create when old is nil and an
// update of old otherwise, within kube's runtime cost budget of one
// custom resource (celconfig.RuntimeCELCostBudget). On an update, the
// errors of values equal to their old value are dropped (kube's
// CRDValidationRatcheting, GA): transition rules still apply.
func (r *Rules) Validate(ctx context.Context, obj, old map[string]any) field.ErrorList {
	if r == nil {
		return nil
	}
	var opts []cel.Option
	var oldObj any // a nil map must stay an untyped nil: it means "no old value"
	if old != nil {
		oldObj = old
		opts = append(opts, cel.WithRatcheting(common.NewCorrelatedObject(obj, old, &model.Structural{Structural: r.schema})))
	}
	errs, _ := r.validator.Validate(ctx, nil, r.schema, obj, oldObj, celconfig.RuntimeCELCostBudget, opts...)
	return errs
}

// Blocking returns kube's error for an object whose schema errors keep its
// rules from being evaluated (wrong types, missing required fields, enum,
// length and size violations), or nil when the rules may run.
func Blocking(errs field.ErrorList) *field.Error {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong,
			field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")
		}
	}
	return nil
}
