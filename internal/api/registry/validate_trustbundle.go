package registry

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxTrustBundleSize bounds a ClusterTrustBundle's PEM (kube: 1 MiB).
const maxTrustBundleSize = 1 << 20

// validateClusterTrustBundle: a bundle of a signer is named
// <signer with / as :>:<name>, one without has no ":" in its name; the
// trust bundle holds distinct CA certificates only; the signer never
// changes.
func validateClusterTrustBundle(obj, old runtime.Object) field.ErrorList {
	b := obj.(*certificatesv1.ClusterTrustBundle)
	var errs field.ErrorList
	name := field.NewPath("metadata", "name")
	if signer := b.Spec.SignerName; signer != "" {
		errs = append(errs, validateSignerName(field.NewPath("spec", "signerName"), signer)...)
		prefix := strings.ReplaceAll(signer, "/", ":") + ":"
		if rest, ok := strings.CutPrefix(b.Name, prefix); !ok {
			errs = append(errs, field.Invalid(name, b.Name, fmt.Sprintf("ClusterTrustBundle for signerName %s must be named with prefix %s", signer, prefix)))
		} else {
			for _, m := range validation.IsDNS1123Subdomain(rest) {
				errs = append(errs, field.Invalid(name, b.Name, m))
			}
		}
	} else if strings.Contains(b.Name, ":") {
		errs = append(errs, field.Invalid(name, b.Name, `ClusterTrustBundle without signer name must not have ":" in its name`))
	} else {
		for _, m := range validation.IsDNS1123Subdomain(b.Name) {
			errs = append(errs, field.Invalid(name, b.Name, m))
		}
	}
	prev, _ := old.(*certificatesv1.ClusterTrustBundle)
	if prev != nil && prev.Spec.SignerName != b.Spec.SignerName {
		errs = append(errs, field.Invalid(field.NewPath("spec", "signerName"), b.Spec.SignerName, "field is immutable"))
	}
	if prev == nil || prev.Spec.TrustBundle != b.Spec.TrustBundle {
		errs = append(errs, validateTrustBundle(field.NewPath("spec", "trustBundle"), b.Spec.TrustBundle)...)
	}
	return errs
}

// validateTrustBundle: CERTIFICATE blocks without headers, each a CA,
// at least one, none twice.
func validateTrustBundle(p *field.Path, in string) field.ErrorList {
	if len(in) > maxTrustBundleSize {
		return field.ErrorList{field.TooLong(p, "", maxTrustBundleSize)}
	}
	var errs field.ErrorList
	seen := map[string][]int{}
	rest := []byte(in)
	for i := 0; ; i++ {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		bad := func(msg string) {
			errs = append(errs, field.Invalid(p, "<value omitted>", fmt.Sprintf("entry %d %s", i, msg)))
		}
		if b.Type != "CERTIFICATE" {
			bad("has bad block type: " + b.Type)
			continue
		}
		if len(b.Headers) != 0 {
			bad("has PEM block headers")
			continue
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		switch {
		case err != nil:
			bad("does not parse as X.509")
			continue
		case !cert.IsCA:
			bad("does not have the CA bit set")
			continue
		case !cert.BasicConstraintsValid:
			bad("has invalid basic constraints")
			continue
		}
		seen[string(b.Bytes)] = append(seen[string(b.Bytes)], i)
	}
	if len(errs) > 0 {
		return errs
	}
	if len(seen) == 0 {
		return field.ErrorList{field.Invalid(p, "<value omitted>", "at least one trust anchor must be provided")}
	}
	for _, idx := range seen {
		if len(idx) > 1 {
			errs = append(errs, field.Invalid(p, "<value omitted>", fmt.Sprintf("duplicate trust anchor (indices %v)", idx)))
		}
	}
	return errs
}
