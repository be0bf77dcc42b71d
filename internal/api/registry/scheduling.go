package registry

import (
	schedulingv1 "k8s.io/api/scheduling/v1"
)

// schedulingKinds are the served kinds of scheduling.k8s.io/v1.
func schedulingKinds() []*Resource {
	return []*Resource{
		{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses", Singular: "priorityclass",
			Kind: "PriorityClass", ShortNames: []string{"pc"}, HasGeneration: true,
			New: NewOf[schedulingv1.PriorityClass](), NewList: NewOf[schedulingv1.PriorityClassList](),
			Normalize: defaultPriorityClass, Validate: validatePriorityClass},
	}
}
