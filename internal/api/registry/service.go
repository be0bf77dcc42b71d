package registry

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// What a Service's defaults, validation and allocation (internal/api's
// admission_service.go) share: the node port range and which services
// need a cluster IP or are reachable from outside.

// Kube's default service node port range (--service-node-port-range).
const (
	NodePortBase = 30000
	NodePortSize = 2768
)

// prepareServiceUpdate clears the load balancer status of a service that
// is no longer a LoadBalancer (after the stored status was carried over).
func prepareServiceUpdate(obj, _ runtime.Object) {
	svc := obj.(*corev1.Service)
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		svc.Status.LoadBalancer = corev1.LoadBalancerStatus{}
	}
}

// NeedsClusterIP: every service but an ExternalName one has a cluster IP.
func NeedsClusterIP(svc *corev1.Service) bool {
	return svc.Spec.Type != corev1.ServiceTypeExternalName
}

// ExternallyAccessible is kube's service.ExternallyAccessible.
func ExternallyAccessible(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer || svc.Spec.Type == corev1.ServiceTypeNodePort ||
		(svc.Spec.Type == corev1.ServiceTypeClusterIP && len(svc.Spec.ExternalIPs) > 0)
}
