package registry

import corev1 "k8s.io/api/core/v1"

// podQOS is the QoS class kube's pod strategy stores in status.qosClass
// on create (kube's qos.ComputePodQOS): pod-level resources decide when
// set; else Guaranteed when every container has equal non-zero cpu and
// memory requests and limits, BestEffort when none has any, Burstable
// otherwise.
func podQOS(sp *corev1.PodSpec) corev1.PodQOSClass {
	if r := sp.Resources; r != nil && (len(r.Requests) > 0 || len(r.Limits) > 0) {
		return requirementsQOS(r)
	}
	var qos corev1.PodQOSClass
	for _, cs := range [][]corev1.Container{sp.InitContainers, sp.Containers} {
		for i := range cs {
			c := requirementsQOS(&cs[i].Resources)
			switch {
			case c == corev1.PodQOSBurstable:
				return c
			case qos == "":
				qos = c
			case qos != c:
				return corev1.PodQOSBurstable
			}
		}
	}
	if qos == "" {
		return corev1.PodQOSBestEffort
	}
	return qos
}

// requirementsQOS is the class of one set of requirements, from cpu and
// memory.
func requirementsQOS(r *corev1.ResourceRequirements) corev1.PodQOSClass {
	if len(r.Requests) == 0 && len(r.Limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	var qos corev1.PodQOSClass
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, lim := r.Requests[name], r.Limits[name]
		c := corev1.PodQOSGuaranteed
		switch {
		case !req.Equal(lim):
			return corev1.PodQOSBurstable
		case req.IsZero():
			c = corev1.PodQOSBestEffort
		}
		if qos == "" {
			qos = c
		} else if qos != c {
			return corev1.PodQOSBurstable
		}
	}
	return qos
}
