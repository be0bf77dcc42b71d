package crdvalidation

import (
	"context"
	"fmt"
	"strings"

	apiextinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ruleField is the schema extension the rules live in; totalCostDetail
// starts the detail of kube's error for a schema whose rules together are
// estimated too expensive (reported on the openAPIV3Schema itself).
const (
	ruleField       = "x-kubernetes-validations"
	totalCostDetail = ruleField + " estimated rule cost total"
)

// CRDErrors returns kube's validation errors of the rules of crd, created
// (old nil) or replacing old: empty or malformed rules, messages, reasons
// and field paths, rules and messageExpressions that do not compile,
// oldSelf where it cannot be correlated, and estimated costs over kube's
// limits. It runs kube's own CRD validation (ValidateCustomResourceDefinition
// and …Update, which also let the unchanged rules of an update compile with
// every library kube stored them with) on the internal form of crd, whose
// field paths kube reports (spec.validation.openAPIV3Schema… when every
// version has the same schema), and keeps only the errors about rules: the
// rest of the CRD is checked by the caller.
func CRDErrors(ctx context.Context, crd, old *apiextv1.CustomResourceDefinition) field.ErrorList {
	if !hasRules(crd) {
		return nil
	}
	in, err := internalCRD(crd)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
	}
	var all field.ErrorList
	if old == nil {
		all = apiextvalidation.ValidateCustomResourceDefinition(ctx, in)
	} else {
		o, err := internalCRD(old)
		if err != nil {
			return field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
		}
		all = apiextvalidation.ValidateCustomResourceDefinitionUpdate(ctx, in, o)
	}
	var errs field.ErrorList
	for _, e := range all {
		if strings.Contains(e.Field, ruleField) || strings.HasPrefix(e.Detail, totalCostDetail) {
			errs = append(errs, e)
		}
	}
	return errs
}

// internalCRD converts crd to the internal form kube validates.
func internalCRD(crd *apiextv1.CustomResourceDefinition) (*apiextinternal.CustomResourceDefinition, error) {
	out := &apiextinternal.CustomResourceDefinition{}
	if err := apiextv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd.DeepCopy(), out, nil); err != nil {
		return nil, fmt.Errorf("crdvalidation: convert CRD %s: %w", crd.Name, err)
	}
	return out, nil
}

// hasRules reports whether some version's schema declares a rule: CRDs
// without any skip kube's validation entirely.
func hasRules(crd *apiextv1.CustomResourceDefinition) bool {
	for i := range crd.Spec.Versions {
		if s := crd.Spec.Versions[i].Schema; s != nil && schemaHasRules(s.OpenAPIV3Schema) {
			return true
		}
	}
	return false
}

func schemaHasRules(s *apiextv1.JSONSchemaProps) bool {
	if s == nil {
		return false
	}
	if len(s.XValidations) > 0 {
		return true
	}
	for _, p := range s.Properties {
		if schemaHasRules(&p) {
			return true
		}
	}
	if s.Items != nil {
		if schemaHasRules(s.Items.Schema) {
			return true
		}
		for i := range s.Items.JSONSchemas {
			if schemaHasRules(&s.Items.JSONSchemas[i]) {
				return true
			}
		}
	}
	if s.AdditionalProperties != nil && schemaHasRules(s.AdditionalProperties.Schema) {
		return true
	}
	for _, list := range [][]apiextv1.JSONSchemaProps{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range list {
			if schemaHasRules(&list[i]) {
				return true
			}
		}
	}
	return schemaHasRules(s.Not)
}
