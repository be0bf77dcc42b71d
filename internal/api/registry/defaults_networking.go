package registry

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// prepareIngress: a create cannot set status. (kube's DefaultIngressClass
// admission would also set spec.ingressClassName from the default
// IngressClass: litek8s does not, it looks at no other object here.)
func prepareIngress(obj runtime.Object) {
	obj.(*networkingv1.Ingress).Status = networkingv1.IngressStatus{}
}

// defaultIngressClass: parameters are cluster-scoped unless said otherwise.
func defaultIngressClass(obj runtime.Object) {
	ic := obj.(*networkingv1.IngressClass)
	if p := ic.Spec.Parameters; p != nil {
		p.Scope = defaultPtr(p.Scope, networkingv1.IngressClassParametersReferenceScopeCluster)
	}
}

// defaultNetworkPolicy: ports are TCP; a policy without policyTypes is an
// Ingress policy, and an Egress one too if it has egress rules.
func defaultNetworkPolicy(obj runtime.Object) {
	np := obj.(*networkingv1.NetworkPolicy)
	sp := &np.Spec
	for i := range sp.Ingress {
		defaultPolicyPorts(sp.Ingress[i].Ports)
	}
	for i := range sp.Egress {
		defaultPolicyPorts(sp.Egress[i].Ports)
	}
	if len(sp.PolicyTypes) == 0 {
		sp.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if len(sp.Egress) != 0 {
			sp.PolicyTypes = append(sp.PolicyTypes, networkingv1.PolicyTypeEgress)
		}
	}
}

func defaultPolicyPorts(ports []networkingv1.NetworkPolicyPort) {
	for i := range ports {
		ports[i].Protocol = defaultPtr(ports[i].Protocol, corev1.ProtocolTCP)
	}
}

// prepareServiceCIDR: a new ServiceCIDR has no status (kube 1.37 wipes it:
// ServiceCIDRStatusFieldWiping is on).
func prepareServiceCIDR(obj runtime.Object) {
	obj.(*networkingv1.ServiceCIDR).Status = networkingv1.ServiceCIDRStatus{}
}
