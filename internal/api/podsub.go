package api

import (
	"fmt"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// pods/ephemeralcontainers and pods/resize: GET answers the pod; PUT and
// PATCH (every patch type, apply included) change only
// spec.ephemeralContainers, or only the containers' resources and
// resizePolicy, as kube's podEphemeralContainersStrategy and
// podResizeStrategy do; everything else the request sends is the stored
// pod's. kube's validation of the change follows (422 Pod).

var podGK = schema.GroupKind{Kind: "Pod"}

// subresourceOnly is the result of a write to subresource sub: obj as it
// was sent for the main resource, the stored object with obj's status
// for status, and the stored pod with what ephemeralcontainers or resize
// may change.
func subresourceOnly(sub string, old, obj runtime.Object) runtime.Object {
	if statusLike(sub) {
		return statusOnly(old, obj)
	}
	switch sub {
	case "ephemeralcontainers", "resize":
	default:
		return obj
	}
	np, ok1 := obj.(*corev1.Pod)
	op, ok2 := old.(*corev1.Pod)
	if !ok1 || !ok2 {
		return obj
	}
	out := op.DeepCopy()
	out.ManagedFields, out.ResourceVersion = np.ManagedFields, np.ResourceVersion
	if sub == "ephemeralcontainers" {
		out.Spec.EphemeralContainers = np.Spec.EphemeralContainers
		return out
	}
	if !sameContainerNames(np.Spec.Containers, op.Spec.Containers) ||
		!sameContainerNames(np.Spec.InitContainers, op.Spec.InitContainers) {
		return np // validatePodResize refuses it
	}
	for i := range out.Spec.Containers {
		out.Spec.Containers[i].Resources, out.Spec.Containers[i].ResizePolicy = np.Spec.Containers[i].Resources, np.Spec.Containers[i].ResizePolicy
	}
	for i := range out.Spec.InitContainers {
		out.Spec.InitContainers[i].Resources, out.Spec.InitContainers[i].ResizePolicy = np.Spec.InitContainers[i].Resources, np.Spec.InitContainers[i].ResizePolicy
	}
	return out
}

func sameContainerNames(a, b []corev1.Container) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name {
			return false
		}
	}
	return true
}

// validatePodSubresource validates a write to pods/ephemeralcontainers or
// pods/resize (nil for anything else).
func validatePodSubresource(sub string, obj, old runtime.Object) error {
	np, ok1 := obj.(*corev1.Pod)
	op, ok2 := old.(*corev1.Pod)
	if !ok1 || !ok2 {
		return nil
	}
	var errs field.ErrorList
	switch sub {
	case "ephemeralcontainers":
		errs = validateEphemeralContainersUpdate(np, op)
	case "resize":
		errs = validatePodResize(np, op)
	default:
		return nil
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(podGK, np.Name, errs)
	}
	return nil
}

// validateEphemeralContainersUpdate is kube's
// ValidatePodEphemeralContainersUpdate: existing ephemeral containers
// stay as they are; new ones have a unique name, an image, a target among
// the pod's containers, and none of the fields kube forbids them.
func validateEphemeralContainersUpdate(np, op *corev1.Pod) field.ErrorList {
	if _, ok := op.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods do not support ephemeral containers")}
	}
	var errs field.ErrorList
	specPath := field.NewPath("spec").Child("ephemeralContainers")
	byName := map[string]*corev1.EphemeralContainer{}
	for i := range np.Spec.EphemeralContainers {
		byName[np.Spec.EphemeralContainers[i].Name] = &np.Spec.EphemeralContainers[i]
	}
	for _, o := range op.Spec.EphemeralContainers {
		n, ok := byName[o.Name]
		switch {
		case !ok:
			errs = append(errs, field.Forbidden(specPath, fmt.Sprintf("existing ephemeral containers %q may not be removed\n", o.Name)))
		case !apiequality.Semantic.DeepEqual(o, *n):
			errs = append(errs, field.Forbidden(specPath, fmt.Sprintf("existing ephemeral containers %q may not be changed", o.Name)))
		}
	}
	others, all := map[string]bool{}, map[string]bool{}
	for _, cs := range [][]corev1.Container{np.Spec.Containers, np.Spec.InitContainers} {
		for _, c := range cs {
			others[c.Name], all[c.Name] = true, true
		}
	}
	for i, ec := range np.Spec.EphemeralContainers {
		p := specPath.Index(i)
		switch {
		case ec.Name == "":
			errs = append(errs, field.Required(p.Child("name"), ""))
		default:
			for _, msg := range validation.IsDNS1123Label(ec.Name) {
				errs = append(errs, field.Invalid(p.Child("name"), ec.Name, msg))
			}
		}
		if all[ec.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), ec.Name))
		}
		all[ec.Name] = true
		if strings.TrimSpace(ec.Image) == "" {
			errs = append(errs, field.Required(p.Child("image"), ""))
		}
		if ec.TargetContainerName != "" && !others[ec.TargetContainerName] {
			errs = append(errs, field.NotFound(p.Child("targetContainerName"), ec.TargetContainerName))
		}
		errs = append(errs, forbiddenEphemeralFields(ec.EphemeralContainerCommon, p)...)
		for j, vm := range ec.VolumeMounts {
			if vm.SubPath != "" {
				errs = append(errs, field.Forbidden(p.Child("volumeMounts").Index(j).Child("subPath"), "cannot be set for an Ephemeral Container"))
			}
			if vm.SubPathExpr != "" {
				errs = append(errs, field.Forbidden(p.Child("volumeMounts").Index(j).Child("subPathExpr"), "cannot be set for an Ephemeral Container"))
			}
		}
	}
	return errs
}

// allowedEphemeralContainerFields are kube's: the other fields of
// EphemeralContainerCommon may not be set.
var allowedEphemeralContainerFields = map[string]bool{"Name": true, "Image": true, "Command": true, "Args": true,
	"WorkingDir": true, "EnvFrom": true, "Env": true, "VolumeMounts": true, "VolumeDevices": true,
	"TerminationMessagePath": true, "TerminationMessagePolicy": true, "ImagePullPolicy": true,
	"SecurityContext": true, "Stdin": true, "StdinOnce": true, "TTY": true}

// forbiddenEphemeralFields is kube's validateFieldAllowList.
func forbiddenEphemeralFields(ec corev1.EphemeralContainerCommon, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	v := reflect.ValueOf(ec)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if allowedEphemeralContainerFields[f.Name] || v.Field(i).IsZero() {
			continue
		}
		name := strings.ToLower(f.Name[:1]) + f.Name[1:]
		errs = append(errs, field.Forbidden(p.Child(name), "cannot be set for an Ephemeral Container"))
	}
	return errs
}

// validatePodResize is kube's ValidatePodResize for containers: the same
// containers in the same order, no requests or limits removed, only cpu
// and memory changed, and the same QoS class.
func validatePodResize(np, op *corev1.Pod) field.ErrorList {
	if _, ok := op.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods cannot be resized")}
	}
	if op.Spec.OS != nil && op.Spec.OS.Name == corev1.Windows {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "windows pods cannot be resized")}
	}
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if resizeQOS(op) != resizeQOS(np) {
		errs = append(errs, field.Invalid(spec, np.Status.QOSClass, "Pod QOS Class may not change as a result of resizing"))
	}
	var order field.ErrorList // the rest compares containers by index
	for _, kind := range []struct {
		name     string
		new, old []corev1.Container
	}{{"containers", np.Spec.Containers, op.Spec.Containers}, {"initContainers", np.Spec.InitContainers, op.Spec.InitContainers}} {
		if len(kind.new) != len(kind.old) {
			order = append(order, field.Forbidden(spec.Child(kind.name), kind.name+" may not be added or removed on resize"))
			continue
		}
		for i := range kind.old {
			if kind.new[i].Name != kind.old[i].Name {
				order = append(order, field.Forbidden(spec.Child(kind.name).Index(i).Child("name"),
					kind.name+" may not be renamed or reordered on resize"))
			}
		}
	}
	if len(order) > 0 {
		return append(errs, order...)
	}
	for i := range op.Spec.Containers {
		n, o := np.Spec.Containers[i], op.Spec.Containers[i]
		p := spec.Child("containers").Index(i).Child("resources")
		if resourcesRemoved(n.Resources.Requests, o.Resources.Requests) {
			errs = append(errs, field.Forbidden(p.Child("requests"), "resource requests cannot be removed"))
		}
		if resourcesRemoved(n.Resources.Limits, o.Resources.Limits) {
			errs = append(errs, field.Forbidden(p.Child("limits"), "resource limits cannot be removed"))
		}
		n.Resources.Requests = withOldCPUMemory(n.Resources.Requests, o.Resources.Requests)
		n.Resources.Limits = withOldCPUMemory(n.Resources.Limits, o.Resources.Limits)
		n.ResizePolicy = o.ResizePolicy
		if !apiequality.Semantic.DeepEqual(n, o) {
			errs = append(errs, field.Forbidden(spec, "only cpu and memory resources are mutable"))
		}
	}
	for i := range op.Spec.InitContainers {
		n, o := np.Spec.InitContainers[i], op.Spec.InitContainers[i]
		sidecar := o.RestartPolicy != nil && *o.RestartPolicy == corev1.ContainerRestartPolicyAlways
		if apiequality.Semantic.DeepEqual(n, o) {
			continue
		}
		if !sidecar {
			errs = append(errs, field.Forbidden(spec, "resources for non-sidecar init containers are immutable"))
			continue
		}
		n.Resources.Requests = withOldCPUMemory(n.Resources.Requests, o.Resources.Requests)
		n.Resources.Limits = withOldCPUMemory(n.Resources.Limits, o.Resources.Limits)
		n.ResizePolicy = o.ResizePolicy
		if !apiequality.Semantic.DeepEqual(n, o) {
			errs = append(errs, field.Forbidden(spec.Child("initContainers").Index(i),
				"only cpu and memory resources for init or sidecar containers are mutable"))
		}
	}
	return errs
}

func resourcesRemoved(n, o corev1.ResourceList) bool {
	for name := range o {
		if _, ok := n[name]; !ok {
			return true
		}
	}
	return false
}

// withOldCPUMemory is n with o's cpu and memory (kube's
// dropCPUMemoryUpdates): what remains different is not a resize.
func withOldCPUMemory(n, o corev1.ResourceList) corev1.ResourceList {
	if n == nil {
		return nil
	}
	out := n.DeepCopy()
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if v, ok := o[r]; ok {
			out[r] = v
		} else {
			delete(out, r)
		}
	}
	return out
}

// resizeQOS is the pod's QoS class from its containers' cpu and memory
// (kube's qos.ComputePodQOS without pod-level resources).
func resizeQOS(pod *corev1.Pod) corev1.PodQOSClass {
	requests, limits := 0, 0
	guaranteed := true
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				req, hasReq := c.Resources.Requests[r]
				lim, hasLim := c.Resources.Limits[r]
				if hasReq && !req.IsZero() {
					requests++
				}
				if hasLim && !lim.IsZero() {
					limits++
				}
				if !hasLim || (hasReq && req.Cmp(lim) != 0) {
					guaranteed = false
				}
			}
		}
	}
	switch {
	case requests == 0 && limits == 0:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

// statusLike reports whether subresource sub changes status only (status,
// and a CSR's approval).
func statusLike(sub string) bool { return sub == "status" || sub == "approval" }
