package registry

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// prepareHorizontalPodAutoscaler: a create cannot set status.
func prepareHorizontalPodAutoscaler(obj runtime.Object) {
	obj.(*autoscalingv2.HorizontalPodAutoscaler).Status = autoscalingv2.HorizontalPodAutoscalerStatus{}
}

// defaultHorizontalPodAutoscaler: at least 1 replica; without metrics, 80%
// CPU utilization; a behavior gets kube's scale-up and scale-down rules
// for what it leaves unset.
func defaultHorizontalPodAutoscaler(obj runtime.Object) {
	hpa := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	sp := &hpa.Spec
	sp.MinReplicas = defaultInt32(sp.MinReplicas, 1)
	if len(sp.Metrics) == 0 {
		sp.Metrics = []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{
					Type:               autoscalingv2.UtilizationMetricType,
					AverageUtilization: defaultInt32(nil, 80),
				},
			},
		}}
	}
	if b := sp.Behavior; b != nil {
		b.ScaleUp = defaultScalingRules(b.ScaleUp, scaleUpRules())
		b.ScaleDown = defaultScalingRules(b.ScaleDown, scaleDownRules())
	}
}

// scaleUpRules: no stabilization, the larger of 4 pods or 100% per 15 s.
func scaleUpRules() *autoscalingv2.HPAScalingRules {
	maxPolicy := autoscalingv2.MaxChangePolicySelect
	return &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: defaultInt32(nil, 0),
		SelectPolicy:               &maxPolicy,
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		},
	}
}

// scaleDownRules: up to 100% per 15 s (the stabilization window is left to
// the controller's default).
func scaleDownRules() *autoscalingv2.HPAScalingRules {
	maxPolicy := autoscalingv2.MaxChangePolicySelect
	return &autoscalingv2.HPAScalingRules{
		SelectPolicy: &maxPolicy,
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		},
	}
}

// defaultScalingRules returns the defaults d with what set specifies.
func defaultScalingRules(set, d *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if set == nil {
		return d
	}
	if set.SelectPolicy != nil {
		d.SelectPolicy = set.SelectPolicy
	}
	if set.StabilizationWindowSeconds != nil {
		d.StabilizationWindowSeconds = set.StabilizationWindowSeconds
	}
	if set.Policies != nil {
		d.Policies = set.Policies
	}
	if set.Tolerance != nil {
		d.Tolerance = set.Tolerance
	}
	return d
}
