package registry

import (
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// defaultPriorityClass: pods of the class preempt lower priorities.
func defaultPriorityClass(obj runtime.Object) {
	pc := obj.(*schedulingv1.PriorityClass)
	pc.PreemptionPolicy = defaultPtr(pc.PreemptionPolicy, corev1.PreemptLowerPriority)
}
