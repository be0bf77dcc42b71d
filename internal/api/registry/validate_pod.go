package registry

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

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

// podCertificateKeyTypes are the key types a podCertificate projection
// may ask for.
var podCertificateKeyTypes = []string{"RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"}

// validatePodCertificates checks the podCertificate sources of projected
// volumes as kube does: a signer name, a supported key type, and a
// maxExpirationSeconds of at least an hour and at most 91 days (24 hours
// for kubernetes.io signers).
func validatePodCertificates(vols []corev1.Volume, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, v := range vols {
		if v.Projected == nil {
			continue
		}
		for j, src := range v.Projected.Sources {
			pc := src.PodCertificate
			if pc == nil {
				continue
			}
			p := path.Index(i).Child("projected", "sources").Index(j).Child("podCertificate")
			errs = append(errs, validateSignerName(p.Child("signerName"), pc.SignerName)...)
			if !slices.Contains(podCertificateKeyTypes, pc.KeyType) {
				errs = append(errs, field.NotSupported(p.Child("keyType"), pc.KeyType, podCertificateKeyTypes))
			}
			if s := pc.MaxExpirationSeconds; s != nil {
				limit := int32(91 * 24 * 3600)
				if strings.HasPrefix(pc.SignerName, "kubernetes.io/") {
					limit = 24 * 3600
				}
				if *s < 3600 {
					errs = append(errs, field.Invalid(p.Child("maxExpirationSeconds"), *s, "if provided, maxExpirationSeconds must be >= 3600"))
				}
				if *s > limit {
					errs = append(errs, field.Invalid(p.Child("maxExpirationSeconds"), *s,
						fmt.Sprintf("if provided, maxExpirationSeconds must be <= %d", limit)))
				}
			}
		}
	}
	return errs
}
