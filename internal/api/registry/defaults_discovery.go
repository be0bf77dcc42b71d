package registry

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// defaultEndpointSlice: a port without name is named "", without protocol
// is TCP.
func defaultEndpointSlice(obj runtime.Object) {
	eps := obj.(*discoveryv1.EndpointSlice)
	for i := range eps.Ports {
		p := &eps.Ports[i]
		p.Name = defaultPtr(p.Name, "")
		p.Protocol = defaultPtr(p.Protocol, corev1.ProtocolTCP)
	}
}
