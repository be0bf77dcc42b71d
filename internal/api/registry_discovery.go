package api

import (
	discoveryv1 "k8s.io/api/discovery/v1"
)

// discoveryKinds are the served kinds of discovery.k8s.io/v1.
func discoveryKinds() []*resource {
	return []*resource{
		{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices", Singular: "endpointslice",
			Kind: "EndpointSlice", Namespaced: true, HasGeneration: true,
			New: newOf[discoveryv1.EndpointSlice](), NewList: newOf[discoveryv1.EndpointSliceList](),
			Normalize: defaultEndpointSlice, Validate: validateEndpointSlice},
	}
}
