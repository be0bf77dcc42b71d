package api

import (
	"fmt"
	"regexp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validatePod checks a pod's spec for kube's most common refusals
// (validatePodSpec).
func validatePod(obj, _ runtime.Object) field.ErrorList {
	return validatePodSpec(&obj.(*corev1.Pod).Spec, field.NewPath("spec"))
}

// sysctlName is kube's sysctl name syntax: dot- or slash-separated
// segments of lower-case alphanumerics, '-' and '_'.
var sysctlName = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`)

const sysctlMaxLength = 253

// validateSysctls: names required, well-formed and unique (kube's
// validateSysctls; which sysctls a node allows is the kubelet's check).
func validateSysctls(sysctls []corev1.Sysctl, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, s := range sysctls {
		p := path.Index(i).Child("name")
		switch {
		case s.Name == "":
			errs = append(errs, field.Required(p, ""))
		case len(s.Name) > sysctlMaxLength || !sysctlName.MatchString(s.Name):
			errs = append(errs, field.Invalid(p, s.Name,
				fmt.Sprintf("must have at most %d characters and match regex %s", sysctlMaxLength, sysctlName)))
		case seen[s.Name]:
			errs = append(errs, field.Duplicate(p, s.Name))
		}
		seen[s.Name] = true
	}
	return errs
}
