package registry

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// admissionregistrationKinds are the served kinds of
// admissionregistration.k8s.io/v1. The admission chain acts on them
// (internal/api/admission: the webhook and policy plugins read them from
// the member's store).
func admissionregistrationKinds() []*Resource {
	const g = "admissionregistration.k8s.io"
	ext := []string{"api-extensions"}
	return []*Resource{
		{Group: g, Version: "v1", Resource: "validatingwebhookconfigurations", Singular: "validatingwebhookconfiguration",
			Kind: "ValidatingWebhookConfiguration", Categories: ext, HasGeneration: true,
			New:       NewOf[admissionregistrationv1.ValidatingWebhookConfiguration](),
			NewList:   NewOf[admissionregistrationv1.ValidatingWebhookConfigurationList](),
			Normalize: defaultValidatingWebhookConfiguration},
		{Group: g, Version: "v1", Resource: "mutatingwebhookconfigurations", Singular: "mutatingwebhookconfiguration",
			Kind: "MutatingWebhookConfiguration", Categories: ext, HasGeneration: true,
			New:       NewOf[admissionregistrationv1.MutatingWebhookConfiguration](),
			NewList:   NewOf[admissionregistrationv1.MutatingWebhookConfigurationList](),
			Normalize: defaultMutatingWebhookConfiguration},
		{Group: g, Version: "v1", Resource: "validatingadmissionpolicies", Singular: "validatingadmissionpolicy",
			Kind: "ValidatingAdmissionPolicy", Categories: ext, HasGeneration: true, Status: true,
			New:       NewOf[admissionregistrationv1.ValidatingAdmissionPolicy](),
			NewList:   NewOf[admissionregistrationv1.ValidatingAdmissionPolicyList](),
			Prepare:   prepareValidatingAdmissionPolicy,
			Normalize: defaultValidatingAdmissionPolicy,
			Validate:  validateValidatingAdmissionPolicy},
		{Group: g, Version: "v1", Resource: "validatingadmissionpolicybindings",
			Singular: "validatingadmissionpolicybinding", Kind: "ValidatingAdmissionPolicyBinding",
			Categories: ext, HasGeneration: true,
			New:       NewOf[admissionregistrationv1.ValidatingAdmissionPolicyBinding](),
			NewList:   NewOf[admissionregistrationv1.ValidatingAdmissionPolicyBindingList](),
			Normalize: defaultValidatingAdmissionPolicyBinding,
			Validate:  validateValidatingAdmissionPolicyBinding},
		{Group: g, Version: "v1", Resource: "mutatingadmissionpolicies", Singular: "mutatingadmissionpolicy",
			Kind: "MutatingAdmissionPolicy", Categories: ext, HasGeneration: true,
			New:       NewOf[admissionregistrationv1.MutatingAdmissionPolicy](),
			NewList:   NewOf[admissionregistrationv1.MutatingAdmissionPolicyList](),
			Normalize: defaultMutatingAdmissionPolicy},
		{Group: g, Version: "v1", Resource: "mutatingadmissionpolicybindings",
			Singular: "mutatingadmissionpolicybinding", Kind: "MutatingAdmissionPolicyBinding",
			Categories: ext, HasGeneration: true,
			New:       NewOf[admissionregistrationv1.MutatingAdmissionPolicyBinding](),
			NewList:   NewOf[admissionregistrationv1.MutatingAdmissionPolicyBindingList](),
			Normalize: defaultMutatingAdmissionPolicyBinding},
	}
}
