package registry

import (
	networkingv1 "k8s.io/api/networking/v1"
)

// networkingKinds are the served kinds of networking.k8s.io/v1. Nothing
// acts on them (no ingress controller, no network plugin, no Service IP
// allocator reading ServiceCIDRs).
func networkingKinds() []*Resource {
	const g = "networking.k8s.io"
	return []*Resource{
		{Group: g, Version: "v1", Resource: "ingresses", Singular: "ingress", Kind: "Ingress", Namespaced: true,
			ShortNames: []string{"ing"}, HasGeneration: true,
			New: NewOf[networkingv1.Ingress](), NewList: NewOf[networkingv1.IngressList](),
			Prepare: prepareIngress, Status: true, Validate: validateIngress},
		{Group: g, Version: "v1", Resource: "ingressclasses", Singular: "ingressclass", Kind: "IngressClass",
			HasGeneration: true, New: NewOf[networkingv1.IngressClass](), NewList: NewOf[networkingv1.IngressClassList](),
			Normalize: defaultIngressClass, Validate: validateIngressClass},
		{Group: g, Version: "v1", Resource: "networkpolicies", Singular: "networkpolicy", Kind: "NetworkPolicy",
			Namespaced: true, ShortNames: []string{"netpol"}, HasGeneration: true,
			New: NewOf[networkingv1.NetworkPolicy](), NewList: NewOf[networkingv1.NetworkPolicyList](),
			Normalize: defaultNetworkPolicy},
		// The Service IP ranges and the allocated addresses (kube 1.37's
		// MultiCIDRServiceAllocator is GA; kube-proxy watches ServiceCIDRs).
		{Group: g, Version: "v1", Resource: "servicecidrs", Singular: "servicecidr", Kind: "ServiceCIDR",
			New: NewOf[networkingv1.ServiceCIDR](), NewList: NewOf[networkingv1.ServiceCIDRList](),
			Status: true, Prepare: prepareServiceCIDR, Validate: validateServiceCIDR},
		{Group: g, Version: "v1", Resource: "ipaddresses", Singular: "ipaddress", Kind: "IPAddress",
			ShortNames: []string{"ip"}, New: NewOf[networkingv1.IPAddress](), NewList: NewOf[networkingv1.IPAddressList](),
			Validate: validateIPAddress},
	}
}
