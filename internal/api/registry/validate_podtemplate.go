package registry

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validation shared by the kinds that hold a pod template (ReplicationController,
// PodTemplate and the apps and batch kinds).

// labelsMatch reports whether set has every label of sel.
func labelsMatch(sel, set map[string]string) bool {
	for k, v := range sel {
		if w, ok := set[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// validatePodTemplateSpec checks a pod template the way kube's
// ValidatePodTemplateSpec does, for its most common mistakes: label
// syntax and validatePodSpec's.
func validatePodTemplateSpec(t *corev1.PodTemplateSpec, path *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabels(t.Labels, path.Child("labels"))
	errs = append(errs, validation.ValidateAnnotations(t.Annotations, path.Child("annotations"))...)
	return append(errs, validatePodSpec(&t.Spec, path.Child("spec"))...)
}

// validatePodSpec checks the spec of a pod or a pod template: containers
// (at least one, each with a DNS-label name unique in the pod and an
// image), the restart policy, the sysctl names of its security context
// and its volumes' podCertificate projections.
func validatePodSpec(sp *corev1.PodSpec, spec *field.Path) field.ErrorList {
	errs := validateContainers(sp.Containers, spec.Child("containers"), true)
	errs = append(errs, validateContainers(sp.InitContainers, spec.Child("initContainers"), false)...)
	names := map[string]bool{}
	for _, c := range sp.Containers {
		names[c.Name] = true
	}
	for i, c := range sp.InitContainers {
		if c.Name != "" && names[c.Name] {
			errs = append(errs, field.Duplicate(spec.Child("initContainers").Index(i).Child("name"), c.Name))
		}
	}
	if sc := sp.SecurityContext; sc != nil {
		errs = append(errs, validateSysctls(sc.Sysctls, spec.Child("securityContext", "sysctls"))...)
	}
	errs = append(errs, validatePodCertificates(sp.Volumes, spec.Child("volumes"))...)
	switch p := sp.RestartPolicy; p {
	case corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever:
	case "":
		errs = append(errs, field.Required(spec.Child("restartPolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(spec.Child("restartPolicy"), p, []corev1.RestartPolicy{
			corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}))
	}
	return errs
}

// validateContainers: names required, DNS labels and unique, images
// required; at least one container when required.
func validateContainers(cs []corev1.Container, path *field.Path, required bool) field.ErrorList {
	if len(cs) == 0 {
		if required {
			return field.ErrorList{field.Required(path, "")}
		}
		return nil
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, c := range cs {
		p := path.Index(i)
		if c.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else {
			for _, msg := range utilvalidation.IsDNS1123Label(c.Name) {
				errs = append(errs, field.Invalid(p.Child("name"), c.Name, msg))
			}
		}
		if c.Image == "" {
			errs = append(errs, field.Required(p.Child("image"), ""))
		}
		if seen[c.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
		}
		seen[c.Name] = true
	}
	return errs
}

// validateRestartAlways: controllers that keep pods running need
// restartPolicy Always and no activeDeadlineSeconds.
func validateRestartAlways(t *corev1.PodTemplateSpec, path *field.Path, kind string) field.ErrorList {
	var errs field.ErrorList
	if p := t.Spec.RestartPolicy; p != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(path.Child("spec", "restartPolicy"), p, []string{string(corev1.RestartPolicyAlways)}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(path.Child("spec", "activeDeadlineSeconds"),
			"activeDeadlineSeconds in "+kind+" is not Supported"))
	}
	return errs
}

// validateNonnegative is kube's ValidateNonnegativeField.
func validateNonnegative(v int64, path *field.Path) field.ErrorList {
	if v < 0 {
		return field.ErrorList{field.Invalid(path, v, "must be greater than or equal to 0")}
	}
	return nil
}
