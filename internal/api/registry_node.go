package api

import (
	nodev1 "k8s.io/api/node/v1"
)

// nodeKinds are the served kinds of node.k8s.io/v1: RuntimeClasses, which
// the kubelet lists and watches to map a pod's runtimeClassName to its
// CRI handler.
func nodeKinds() []*resource {
	return []*resource{
		{Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses", Singular: "runtimeclass",
			Kind: "RuntimeClass", New: newOf[nodev1.RuntimeClass](), NewList: newOf[nodev1.RuntimeClassList](),
			Validate: validateRuntimeClass},
	}
}
