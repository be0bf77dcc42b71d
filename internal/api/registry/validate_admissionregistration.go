package registry

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	policyvalidation "github.com/litek8s/litek8s/internal/api/admission/policy/validation"
)

// validateValidatingAdmissionPolicy: kube's rules, every CEL expression
// compiled (package policy/validation).
func validateValidatingAdmissionPolicy(obj, old runtime.Object) field.ErrorList {
	var o *admissionregistrationv1.ValidatingAdmissionPolicy
	if old != nil {
		o = old.(*admissionregistrationv1.ValidatingAdmissionPolicy)
	}
	return policyvalidation.Policy(obj.(*admissionregistrationv1.ValidatingAdmissionPolicy), o)
}

func validateValidatingAdmissionPolicyBinding(obj, _ runtime.Object) field.ErrorList {
	return policyvalidation.Binding(obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding))
}
