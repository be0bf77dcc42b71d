package api

import (
	schedulingv1 "k8s.io/api/scheduling/v1"
)

// schedulingKinds are the served kinds of scheduling.k8s.io/v1.
func schedulingKinds() []*resource {
	return []*resource{
		{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses", Singular: "priorityclass",
			Kind: "PriorityClass", ShortNames: []string{"pc"}, HasGeneration: true,
			New: newOf[schedulingv1.PriorityClass](), NewList: newOf[schedulingv1.PriorityClassList](),
			Normalize: defaultPriorityClass, Validate: validatePriorityClass},
	}
}
