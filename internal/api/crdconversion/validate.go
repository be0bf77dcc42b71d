package crdconversion

import (
	"fmt"
	"strings"

	apiextinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// reviewVersions are the ConversionReview versions kube sends, in the
// order it lists them in its messages.
var reviewVersions = []string{"v1", "v1beta1"}

// ValidateConversion is kube's validation of a CRD's spec.conversion: the
// strategy is None or Webhook; Webhook needs a client config with exactly
// one of url and service and conversionReviewVersions that include one
// kube sends; None must set neither. Paths are those of kube's internal
// type (spec.conversion.webhookClientConfig), as kube reports them.
func ValidateConversion(crd *apiextv1.CustomResourceDefinition) field.ErrorList {
	if crd.Spec.Conversion == nil {
		return nil
	}
	var c apiextinternal.CustomResourceConversion
	if err := apiextv1.Convert_v1_CustomResourceConversion_To_apiextensions_CustomResourceConversion(crd.Spec.Conversion, &c, nil); err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("spec", "conversion"), err)}
	}
	p := field.NewPath("spec", "conversion")
	var errs field.ErrorList
	switch c.Strategy {
	case apiextinternal.NoneConverter, apiextinternal.WebhookConverter:
	default:
		errs = append(errs, field.NotSupported(p.Child("strategy"), c.Strategy, []string{"None", "Webhook"}))
	}
	if c.Strategy != apiextinternal.WebhookConverter {
		if c.WebhookClientConfig != nil {
			errs = append(errs, field.Forbidden(p.Child("webhookClientConfig"), "should not be set when strategy is not set to Webhook"))
		}
		if len(c.ConversionReviewVersions) > 0 {
			errs = append(errs, field.Forbidden(p.Child("conversionReviewVersions"), "should not be set when strategy is not set to Webhook"))
		}
		return errs
	}
	cp := p.Child("webhookClientConfig")
	switch cc := c.WebhookClientConfig; {
	case cc == nil:
		errs = append(errs, field.Required(cp, "required when strategy is set to Webhook"))
	case (cc.URL == nil) == (cc.Service == nil):
		errs = append(errs, field.Required(cp, "exactly one of url or service is required"))
	case cc.URL != nil:
		errs = append(errs, validateURL(cp.Child("url"), *cc.URL)...)
	default:
		errs = append(errs, validateService(cp.Child("service"), cc.Service.Name, cc.Service.Namespace, cc.Service.Path, cc.Service.Port)...)
	}
	if cc := c.WebhookClientConfig; cc != nil && len(cc.CABundle) > 0 {
		errs = append(errs, validateCABundle(cp.Child("caBundle"), cc.CABundle)...)
	}
	return append(errs, validateReviewVersions(c.ConversionReviewVersions, p.Child("conversionReviewVersions"))...)
}

func validateReviewVersions(versions []string, p *field.Path) field.ErrorList {
	if len(versions) == 0 {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	seen, known := map[string]bool{}, false
	for i, v := range versions {
		if seen[v] {
			errs = append(errs, field.Invalid(p.Index(i), v, "duplicate version"))
			continue
		}
		seen[v] = true
		for _, msg := range utilvalidation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(p.Index(i), v, msg))
		}
		known = known || reviewVersion([]string{v}) != ""
	}
	if !known {
		errs = append(errs, field.Invalid(p, versions, fmt.Sprintf("must include at least one of %v", strings.Join(reviewVersions, ", "))))
	}
	return errs
}

// reviewVersion returns the first of versions kube sends ("" if none).
func reviewVersion(versions []string) string {
	for _, v := range versions {
		for _, k := range reviewVersions {
			if v == k {
				return v
			}
		}
	}
	return ""
}
