package registry

import (
	discoveryv1 "k8s.io/api/discovery/v1"
)

// discoveryKinds are the served kinds of discovery.k8s.io/v1.
func discoveryKinds() []*Resource {
	return []*Resource{
		{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices", Singular: "endpointslice",
			Kind: "EndpointSlice", Namespaced: true, HasGeneration: true,
			New: NewOf[discoveryv1.EndpointSlice](), NewList: NewOf[discoveryv1.EndpointSliceList](),
			Normalize: defaultEndpointSlice, Validate: validateEndpointSlice},
	}
}
