package registry

import (
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Kube's resource.k8s.io/v1 scheme defaults (SetObjectDefaults_*): device
// requests ask for exactly one device, tolerations compare with Equal and
// a taint is stamped with the second it was added. Normalize runs on the
// leader before proposing, so the clock is read there, never in Apply.

func defaultResourceClaim(obj runtime.Object) {
	claim := obj.(*resourcev1.ResourceClaim)
	defaultDeviceClaim(&claim.Spec.Devices)
	if a := claim.Status.Allocation; a != nil {
		for i := range a.Devices.Results {
			defaultTolerations(a.Devices.Results[i].Tolerations)
		}
	}
}

func defaultResourceClaimTemplate(obj runtime.Object) {
	defaultDeviceClaim(&obj.(*resourcev1.ResourceClaimTemplate).Spec.Spec.Devices)
}

func defaultDeviceClaim(dc *resourcev1.DeviceClaim) {
	for i := range dc.Requests {
		r := &dc.Requests[i]
		if e := r.Exactly; e != nil {
			defaultString(&e.AllocationMode, resourcev1.DeviceAllocationModeExactCount)
			if e.AllocationMode == resourcev1.DeviceAllocationModeExactCount && e.Count == 0 {
				e.Count = 1
			}
			defaultTolerations(e.Tolerations)
		}
		for j := range r.FirstAvailable {
			s := &r.FirstAvailable[j]
			defaultString(&s.AllocationMode, resourcev1.DeviceAllocationModeExactCount)
			if s.AllocationMode == resourcev1.DeviceAllocationModeExactCount && s.Count == 0 {
				s.Count = 1
			}
			defaultTolerations(s.Tolerations)
		}
	}
}

func defaultTolerations(ts []resourcev1.DeviceToleration) {
	for i := range ts {
		defaultString(&ts[i].Operator, resourcev1.DeviceTolerationOpEqual)
	}
}

func defaultResourceSlice(obj runtime.Object) {
	slice := obj.(*resourcev1.ResourceSlice)
	for i := range slice.Spec.Devices {
		for j := range slice.Spec.Devices[i].Taints {
			defaultDeviceTaint(&slice.Spec.Devices[i].Taints[j])
		}
	}
}

func defaultDeviceTaintRule(obj runtime.Object) {
	defaultDeviceTaint(&obj.(*resourcev1.DeviceTaintRule).Spec.Taint)
}

// defaultDeviceTaint is SetDefaults_DeviceTaint.
func defaultDeviceTaint(t *resourcev1.DeviceTaint) {
	if t.TimeAdded == nil {
		t.TimeAdded = &metav1.Time{Time: time.Now().Truncate(time.Second)}
	}
}

// prepareResourceClaim: a new claim is not allocated (status is set by
// the scheduler through /status).
func prepareResourceClaim(obj runtime.Object) {
	obj.(*resourcev1.ResourceClaim).Status = resourcev1.ResourceClaimStatus{}
}

// prepareDeviceTaintRule: a new rule has no status.
func prepareDeviceTaintRule(obj runtime.Object) {
	obj.(*resourcev1.DeviceTaintRule).Status = resourcev1.DeviceTaintRuleStatus{}
}
