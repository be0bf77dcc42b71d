package registry

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// autoscalingKinds are the served kinds of autoscaling. Only v2 serves
// HorizontalPodAutoscalers: kube serves v1 too, from the same storage with
// conversion, which stored bytes served as they are cannot do (both
// versions would share the store key horizontalpodautoscalers.autoscaling).
func autoscalingKinds() []*Resource {
	return []*Resource{
		{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers", Singular: "horizontalpodautoscaler",
			Kind: "HorizontalPodAutoscaler", Namespaced: true, ShortNames: []string{"hpa"}, Categories: []string{"all"},
			HasGeneration: true, New: NewOf[autoscalingv2.HorizontalPodAutoscaler](),
			NewList: NewOf[autoscalingv2.HorizontalPodAutoscalerList](), Prepare: prepareHorizontalPodAutoscaler,
			Normalize: defaultHorizontalPodAutoscaler, Status: true, Validate: validateHorizontalPodAutoscaler},
	}
}
