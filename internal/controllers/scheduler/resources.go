package scheduler

import (
	corev1 "k8s.io/api/core/v1"
)

// Kube's defaults for the scoring of containers without requests
// (schedutil.DefaultMilliCPURequest, DefaultMemoryRequest): filters use the
// real requests, scores these, so that pods without requests spread too.
const (
	nonZeroMilliCPU = 100
	nonZeroMemory   = 200 << 20
)

// resources are amounts of the resources the scheduler counts.
type resources struct {
	milliCPU, memory, ephemeral int64
	// scalar are the other (extended, hugepages) resources; nil when none.
	scalar map[corev1.ResourceName]int64
}

func (r *resources) add(o *resources, sign int64) {
	r.milliCPU += sign * o.milliCPU
	r.memory += sign * o.memory
	r.ephemeral += sign * o.ephemeral
	for k, v := range o.scalar {
		if r.scalar == nil {
			r.scalar = make(map[corev1.ResourceName]int64)
		}
		r.scalar[k] += sign * v
	}
}

// max raises r to at least o, resource by resource.
func (r *resources) max(o *resources) {
	r.milliCPU = max(r.milliCPU, o.milliCPU)
	r.memory = max(r.memory, o.memory)
	r.ephemeral = max(r.ephemeral, o.ephemeral)
	for k, v := range o.scalar {
		if r.scalar == nil {
			r.scalar = make(map[corev1.ResourceName]int64)
		}
		r.scalar[k] = max(r.scalar[k], v)
	}
}

// resourcesOf reads a ResourceList ("pods" is not a resource here).
func resourcesOf(l corev1.ResourceList) resources {
	var r resources
	for name, q := range l {
		switch name {
		case corev1.ResourceCPU:
			r.milliCPU = q.MilliValue()
		case corev1.ResourceMemory:
			r.memory = q.Value()
		case corev1.ResourceEphemeralStorage:
			r.ephemeral = q.Value()
		case corev1.ResourcePods:
		default:
			if r.scalar == nil {
				r.scalar = make(map[corev1.ResourceName]int64)
			}
			r.scalar[name] = q.Value()
		}
	}
	return r
}

// containerRequests are a container's requests; a resource with a limit
// and no request requests its limit (kube's defaulting).
func containerRequests(c *corev1.Container) resources {
	if len(c.Resources.Limits) == 0 {
		return resourcesOf(c.Resources.Requests)
	}
	l := make(corev1.ResourceList, len(c.Resources.Limits))
	for k, v := range c.Resources.Limits {
		l[k] = v
	}
	for k, v := range c.Resources.Requests {
		l[k] = v
	}
	return resourcesOf(l)
}

// podRequests is kube's pod request: the pod-level resources when set,
// else the sum of the containers and sidecars (restartable init
// containers), raised to what any init container needs, plus the
// overhead. nonZero are the cpu and memory requests for scoring.
func podRequests(spec *corev1.PodSpec) (req resources, nonZeroCPU, nonZeroMem int64) {
	var sidecars resources
	for i := range spec.Containers {
		c := containerRequests(&spec.Containers[i])
		req.add(&c, 1)
		nonZeroCPU += orDefault(c.milliCPU, nonZeroMilliCPU)
		nonZeroMem += orDefault(c.memory, nonZeroMemory)
	}
	for i := range spec.InitContainers {
		ic := &spec.InitContainers[i]
		c := containerRequests(ic)
		if ic.RestartPolicy != nil && *ic.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars.add(&c, 1)
			req.add(&c, 1)
			continue
		}
		c.add(&sidecars, 1) // an init container runs beside the sidecars started before it
		req.max(&c)
	}
	if spec.Resources != nil && len(spec.Resources.Requests) > 0 {
		req = resourcesOf(spec.Resources.Requests)
	}
	if spec.Overhead != nil {
		o := resourcesOf(spec.Overhead)
		req.add(&o, 1)
	}
	return req, max(nonZeroCPU, req.milliCPU), max(nonZeroMem, req.memory)
}

func orDefault(v, def int64) int64 {
	if v == 0 {
		return def
	}
	return v
}
