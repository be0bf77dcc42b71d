package registry

import (
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validation of the apps/v1 kinds (see validate_core.go).

func validateDeployment(obj, old runtime.Object) field.ErrorList {
	d := obj.(*appsv1.Deployment)
	spec := field.NewPath("spec")
	errs := validateReplicas(d.Spec.Replicas, spec)
	errs = append(errs, validateWorkload(d.Spec.Selector, &d.Spec.Template, spec, "deployment", "Deployment")...)
	errs = append(errs, validateNonnegative(int64(d.Spec.MinReadySeconds), spec.Child("minReadySeconds"))...)
	if p := d.Spec.ProgressDeadlineSeconds; p != nil && *p <= d.Spec.MinReadySeconds {
		errs = append(errs, field.Invalid(spec.Child("progressDeadlineSeconds"), p, "must be greater than minReadySeconds"))
	}
	if prev, ok := old.(*appsv1.Deployment); ok {
		errs = append(errs, validation.ValidateImmutableField(d.Spec.Selector, prev.Spec.Selector, spec.Child("selector"))...)
	}
	return errs
}

func validateReplicaSet(obj, old runtime.Object) field.ErrorList {
	rs := obj.(*appsv1.ReplicaSet)
	spec := field.NewPath("spec")
	errs := validateReplicas(rs.Spec.Replicas, spec)
	errs = append(errs, validateNonnegative(int64(rs.Spec.MinReadySeconds), spec.Child("minReadySeconds"))...)
	// kube says "deployment" in the ReplicaSet message too
	errs = append(errs, validateWorkload(rs.Spec.Selector, &rs.Spec.Template, spec, "deployment", "ReplicaSet")...)
	if prev, ok := old.(*appsv1.ReplicaSet); ok {
		errs = append(errs, validation.ValidateImmutableField(rs.Spec.Selector, prev.Spec.Selector, spec.Child("selector"))...)
	}
	return errs
}

// validateStatefulSet: besides the workload rules, the name must be a DNS
// label (it prefixes the pod names), and the selector, volume claim
// templates, service name and pod management policy are immutable.
func validateStatefulSet(obj, old runtime.Object) field.ErrorList {
	sts := obj.(*appsv1.StatefulSet)
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if old == nil {
		for _, msg := range validation.NameIsDNSLabel(sts.Name, false) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), sts.Name, msg))
		}
	}
	switch p := sts.Spec.PodManagementPolicy; p {
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		errs = append(errs, field.Invalid(spec.Child("podManagementPolicy"), p,
			"must be 'OrderedReady' or 'Parallel'"))
	}
	for i, t := range sts.Spec.VolumeClaimTemplates {
		errs = append(errs, validateClaimSpec(&t.Spec, spec.Child("volumeClaimTemplates").Index(i).Child("spec"))...)
	}
	errs = append(errs, validateReplicas(sts.Spec.Replicas, spec)...)
	errs = append(errs, validateNonnegative(int64(sts.Spec.MinReadySeconds), spec.Child("minReadySeconds"))...)
	errs = append(errs, validateWorkload(sts.Spec.Selector, &sts.Spec.Template, spec, "statefulset", "StatefulSet")...)
	if prev, ok := old.(*appsv1.StatefulSet); ok {
		errs = append(errs, validation.ValidateImmutableField(sts.Spec.Selector, prev.Spec.Selector, spec.Child("selector"))...)
		errs = append(errs, validation.ValidateImmutableField(sts.Spec.VolumeClaimTemplates, prev.Spec.VolumeClaimTemplates,
			spec.Child("volumeClaimTemplates"))...)
		errs = append(errs, validation.ValidateImmutableField(sts.Spec.ServiceName, prev.Spec.ServiceName, spec.Child("serviceName"))...)
		errs = append(errs, validation.ValidateImmutableField(sts.Spec.PodManagementPolicy, prev.Spec.PodManagementPolicy,
			spec.Child("podManagementPolicy"))...)
	}
	return errs
}

func validateDaemonSet(obj, old runtime.Object) field.ErrorList {
	ds := obj.(*appsv1.DaemonSet)
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if prev, ok := old.(*appsv1.DaemonSet); ok {
		errs = append(errs, validation.ValidateImmutableField(ds.Spec.Selector, prev.Spec.Selector, spec.Child("selector"))...)
	}
	errs = append(errs, validateWorkload(ds.Spec.Selector, &ds.Spec.Template, spec, "daemonset", "DaemonSet")...)
	return append(errs, validateNonnegative(int64(ds.Spec.MinReadySeconds), spec.Child("minReadySeconds"))...)
}

// validateControllerRevision: a revision is not negative and holds a JSON
// object; neither changes afterwards.
func validateControllerRevision(obj, old runtime.Object) field.ErrorList {
	cr := obj.(*appsv1.ControllerRevision)
	errs := validateNonnegative(cr.Revision, field.NewPath("revision"))
	data := field.NewPath("data")
	if prev, ok := old.(*appsv1.ControllerRevision); ok {
		return append(errs, validation.ValidateImmutableField(cr.Data, prev.Data, data)...)
	}
	var v any
	switch err := json.Unmarshal(cr.Data.Raw, &v); {
	case cr.Data.Raw == nil || (err == nil && v == nil):
		errs = append(errs, field.Required(data, "data is mandatory"))
	case err != nil:
		errs = append(errs, field.Invalid(data, "<value omitted>", "error parsing data: "+err.Error()))
	default:
		if _, ok := v.(map[string]any); !ok {
			errs = append(errs, field.Required(data, "data must be a valid JSON object"))
		}
	}
	return errs
}

func validateReplicas(replicas *int32, spec *field.Path) field.ErrorList {
	if replicas == nil {
		return nil
	}
	return validateNonnegative(int64(*replicas), spec.Child("replicas"))
}

// validateWorkload checks the selector and pod template of a controller
// whose pods run forever, in kube's order: the selector (required, valid,
// not empty), the template's labels against it, the template itself, and
// restartPolicy Always. what names the kind in "empty selector is invalid
// for <what>"; kind in the activeDeadlineSeconds message.
func validateWorkload(sel *metav1.LabelSelector, t *corev1.PodTemplateSpec, spec *field.Path, what, kind string) field.ErrorList {
	errs := validateSelector(sel, t, spec, what)
	errs = append(errs, validatePodTemplateSpec(t, spec.Child("template"))...)
	return append(errs, validateRestartAlways(t, spec.Child("template"), kind)...)
}

// validateSelector: spec.selector is required (but for a DaemonSet),
// valid and not empty, and the template's labels match it.
func validateSelector(sel *metav1.LabelSelector, t *corev1.PodTemplateSpec, spec *field.Path, what string) field.ErrorList {
	path := spec.Child("selector")
	mismatch := field.Invalid(spec.Child("template", "metadata", "labels"), t.Labels,
		"`selector` does not match template `labels`")
	if sel == nil { // a nil selector selects nothing
		if what == "daemonset" { // optional in kube's DaemonSet validation
			return field.ErrorList{mismatch}
		}
		return field.ErrorList{field.Required(path, ""), mismatch}
	}
	errs := metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, path)
	if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(path, sel, "empty selector is invalid for "+what))
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return append(errs, field.Invalid(path, sel, "invalid label selector"))
	}
	if !s.Empty() && !s.Matches(labels.Set(t.Labels)) {
		errs = append(errs, mismatch)
	}
	return errs
}
