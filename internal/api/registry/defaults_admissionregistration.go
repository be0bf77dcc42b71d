package registry

import (
	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Defaults of admissionregistration.k8s.io/v1: kube's, although litek8s
// calls no webhook and evaluates no policy; clients read them back.

func defaultValidatingWebhookConfiguration(obj runtime.Object) {
	c := obj.(*arv1.ValidatingWebhookConfiguration)
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		defaultWebhook(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds)
		defaultWebhookTarget(&w.ClientConfig, w.Rules)
	}
}

func defaultMutatingWebhookConfiguration(obj runtime.Object) {
	c := obj.(*arv1.MutatingWebhookConfiguration)
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		defaultWebhook(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds)
		w.ReinvocationPolicy = defaultPtr(w.ReinvocationPolicy, arv1.NeverReinvocationPolicy)
		defaultWebhookTarget(&w.ClientConfig, w.Rules)
	}
}

// defaultWebhook: fail closed, match equivalent requests, every namespace
// and object, 10 s timeout.
func defaultWebhook(failure **arv1.FailurePolicyType, match **arv1.MatchPolicyType,
	nsSel, objSel **metav1.LabelSelector, timeout **int32) {
	*failure = defaultPtr(*failure, arv1.Fail)
	*match = defaultPtr(*match, arv1.Equivalent)
	*nsSel = defaultPtr(*nsSel, metav1.LabelSelector{})
	*objSel = defaultPtr(*objSel, metav1.LabelSelector{})
	*timeout = defaultInt32(*timeout, 10)
}

// defaultWebhookTarget: services on port 443, rules of every scope.
func defaultWebhookTarget(cc *arv1.WebhookClientConfig, rules []arv1.RuleWithOperations) {
	if s := cc.Service; s != nil {
		s.Port = defaultInt32(s.Port, 443)
	}
	for i := range rules {
		defaultRule(&rules[i].Rule)
	}
}

func defaultRule(r *arv1.Rule) {
	r.Scope = defaultPtr(r.Scope, arv1.AllScopes)
}

// defaultMatchResources: match equivalent requests, every namespace and
// object, rules of every scope.
func defaultMatchResources(m *arv1.MatchResources) {
	if m == nil {
		return
	}
	m.MatchPolicy = defaultPtr(m.MatchPolicy, arv1.Equivalent)
	m.NamespaceSelector = defaultPtr(m.NamespaceSelector, metav1.LabelSelector{})
	m.ObjectSelector = defaultPtr(m.ObjectSelector, metav1.LabelSelector{})
	for i := range m.ResourceRules {
		defaultRule(&m.ResourceRules[i].Rule)
	}
	for i := range m.ExcludeResourceRules {
		defaultRule(&m.ExcludeResourceRules[i].Rule)
	}
}

// prepareValidatingAdmissionPolicy: a create cannot set status.
func prepareValidatingAdmissionPolicy(obj runtime.Object) {
	obj.(*arv1.ValidatingAdmissionPolicy).Status = arv1.ValidatingAdmissionPolicyStatus{}
}

func defaultValidatingAdmissionPolicy(obj runtime.Object) {
	p := obj.(*arv1.ValidatingAdmissionPolicy)
	p.Spec.FailurePolicy = defaultPtr(p.Spec.FailurePolicy, arv1.Fail)
	defaultMatchResources(p.Spec.MatchConstraints)
}

func defaultValidatingAdmissionPolicyBinding(obj runtime.Object) {
	defaultMatchResources(obj.(*arv1.ValidatingAdmissionPolicyBinding).Spec.MatchResources)
}

func defaultMutatingAdmissionPolicy(obj runtime.Object) {
	p := obj.(*arv1.MutatingAdmissionPolicy)
	p.Spec.FailurePolicy = defaultPtr(p.Spec.FailurePolicy, arv1.Fail)
	defaultMatchResources(p.Spec.MatchConstraints)
}

func defaultMutatingAdmissionPolicyBinding(obj runtime.Object) {
	defaultMatchResources(obj.(*arv1.MutatingAdmissionPolicyBinding).Spec.MatchResources)
}
