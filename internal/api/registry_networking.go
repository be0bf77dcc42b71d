package api

import (
	networkingv1 "k8s.io/api/networking/v1"
)

// networkingKinds are the served kinds of networking.k8s.io/v1. Nothing
// acts on them (no ingress controller, no network plugin).
func networkingKinds() []*resource {
	const g = "networking.k8s.io"
	return []*resource{
		{Group: g, Version: "v1", Resource: "ingresses", Singular: "ingress", Kind: "Ingress", Namespaced: true,
			ShortNames: []string{"ing"}, HasGeneration: true,
			New: newOf[networkingv1.Ingress](), NewList: newOf[networkingv1.IngressList](),
			Prepare: prepareIngress, Status: true, Validate: validateIngress},
		{Group: g, Version: "v1", Resource: "ingressclasses", Singular: "ingressclass", Kind: "IngressClass",
			HasGeneration: true, New: newOf[networkingv1.IngressClass](), NewList: newOf[networkingv1.IngressClassList](),
			Normalize: defaultIngressClass, Validate: validateIngressClass},
		{Group: g, Version: "v1", Resource: "networkpolicies", Singular: "networkpolicy", Kind: "NetworkPolicy",
			Namespaced: true, ShortNames: []string{"netpol"}, HasGeneration: true,
			New: newOf[networkingv1.NetworkPolicy](), NewList: newOf[networkingv1.NetworkPolicyList](),
			Normalize: defaultNetworkPolicy},
	}
}
