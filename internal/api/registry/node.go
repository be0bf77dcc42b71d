package registry

import (
	nodev1 "k8s.io/api/node/v1"
)

// nodeKinds are the served kinds of node.k8s.io/v1: RuntimeClasses, which
// the kubelet lists and watches to map a pod's runtimeClassName to its
// CRI handler.
func nodeKinds() []*Resource {
	return []*Resource{
		{Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses", Singular: "runtimeclass",
			Kind: "RuntimeClass", New: NewOf[nodev1.RuntimeClass](), NewList: NewOf[nodev1.RuntimeClassList](),
			Validate: validateRuntimeClass},
	}
}
