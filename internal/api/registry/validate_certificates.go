package registry

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validation of certificates.k8s.io/v1 (kube's certificates validation):
// a CSR carries a PEM CERTIFICATE REQUEST whose signature checks, a
// qualified signerName and known usages; its Approved, Denied and Failed
// conditions are never removed and its certificate, once issued, never
// changes. What each subresource may change is decided before (csrAdmit).

var knownUsages = sets.New(
	"signing", "digital signature", "content commitment", "key encipherment", "key agreement",
	"data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any",
	"server auth", "client auth", "code signing", "email protection", "s/mime",
	"ipsec end system", "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing",
	"microsoft sgc", "netscape sgc")

// ParseCSR decodes the PEM CERTIFICATE REQUEST of a CSR and checks its
// signature.
func ParseCSR(pemBytes []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, err
	}
	return csr, csr.CheckSignature()
}

// validateCertificatePEM: empty, or CERTIFICATE blocks without headers.
func validateCertificatePEM(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	blocks := 0
	for {
		block, rest := pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("only CERTIFICATE PEM blocks are allowed, found %q", block.Type)
		}
		if len(block.Headers) != 0 {
			return errors.New("no PEM block headers are permitted")
		}
		if certs, err := x509.ParseCertificates(block.Bytes); err != nil {
			return err
		} else if len(certs) == 0 {
			return errors.New("found CERTIFICATE PEM block containing 0 certificates")
		}
		blocks++
		data = rest
	}
	if blocks == 0 {
		return errors.New("must contain at least one CERTIFICATE PEM block")
	}
	return nil
}

// validateSignerName: <domain with a dot>/<path of DNS subdomains>.
func validateSignerName(p *field.Path, name string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	domain, path, ok := strings.Cut(name, "/")
	if !ok || strings.Contains(path, "/") {
		return field.ErrorList{field.Invalid(p, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")}
	}
	var errs field.ErrorList
	if len(domain) > validation.DNS1123SubdomainMaxLength {
		errs = append(errs, field.TooLong(p, "", validation.DNS1123SubdomainMaxLength))
	}
	labels := strings.Split(domain, ".")
	for _, l := range labels {
		if msgs := validation.IsDNS1123Label(l); len(msgs) > 0 {
			for _, m := range msgs {
				errs = append(errs, field.Invalid(p, domain, fmt.Sprintf("validating label %q: %s", l, m)))
			}
			break
		}
	}
	if len(labels) < 2 {
		errs = append(errs, field.Invalid(p, domain, "should be a domain with at least two segments separated by dots"))
	}
	for _, l := range strings.Split(path, ".") {
		if msgs := validation.IsDNS1123Subdomain(l); len(msgs) > 0 {
			for _, m := range msgs {
				errs = append(errs, field.Invalid(p, path, fmt.Sprintf("validating label %q: %s", l, m)))
			}
			break
		}
	}
	return errs
}

// validateCSR checks a CertificateSigningRequest (old nil on create).
func validateCSR(obj, old runtime.Object) field.ErrorList {
	csr := obj.(*certificatesv1.CertificateSigningRequest)
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if _, err := ParseCSR(csr.Spec.Request); err != nil {
		errs = append(errs, field.Invalid(spec.Child("request"), csr.Spec.Request, err.Error()))
	}
	if len(csr.Spec.Usages) == 0 {
		errs = append(errs, field.Required(spec.Child("usages"), ""))
	}
	seen := map[certificatesv1.KeyUsage]bool{}
	for i, u := range csr.Spec.Usages {
		if !knownUsages.Has(string(u)) {
			errs = append(errs, field.NotSupported(spec.Child("usages").Index(i), u, sets.List(knownUsages)))
		}
		if seen[u] {
			errs = append(errs, field.Duplicate(spec.Child("usages").Index(i), u))
		}
		seen[u] = true
	}
	if csr.Spec.SignerName == "kubernetes.io/legacy-unknown" {
		errs = append(errs, field.Invalid(spec.Child("signerName"), csr.Spec.SignerName, "the legacy signerName is not allowed via this API version"))
	} else {
		errs = append(errs, validateSignerName(spec.Child("signerName"), csr.Spec.SignerName)...)
	}
	if s := csr.Spec.ExpirationSeconds; s != nil && *s < 600 {
		errs = append(errs, field.Invalid(spec.Child("expirationSeconds"), *s, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	errs = append(errs, validateCSRConditions(csr)...)
	if err := validateCertificatePEM(csr.Status.Certificate); err != nil {
		errs = append(errs, field.Invalid(field.NewPath("status", "certificate"), "<certificate data>", err.Error()))
	}
	prev, ok := old.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return errs
	}
	conds := field.NewPath("status", "conditions")
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed} {
		if len(CSRConditions(csr, t)) < len(CSRConditions(prev, t)) {
			errs = append(errs, field.Forbidden(conds, fmt.Sprintf("updates may not remove a condition of type %q", t)))
		}
	}
	if len(prev.Status.Certificate) > 0 && !bytes.Equal(prev.Status.Certificate, csr.Status.Certificate) {
		errs = append(errs, field.Forbidden(field.NewPath("status", "certificate"), "updates may not modify existing certificate content"))
	}
	return errs
}

// validateCSRConditions: types set and not repeated, Approved, Denied and
// Failed only True, Approved and Denied not both.
func validateCSRConditions(csr *certificatesv1.CertificateSigningRequest) field.ErrorList {
	p := field.NewPath("status", "conditions")
	var errs field.ErrorList
	seen := map[certificatesv1.RequestConditionType]bool{}
	for i, c := range csr.Status.Conditions {
		if c.Type == "" {
			errs = append(errs, field.Required(p.Index(i).Child("type"), ""))
		}
		allowed := []string{string(corev1.ConditionFalse), string(corev1.ConditionTrue), string(corev1.ConditionUnknown)}
		switch c.Type {
		case certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
			allowed = []string{string(corev1.ConditionTrue)}
		}
		switch {
		case c.Status == "":
			errs = append(errs, field.Required(p.Index(i).Child("status"), ""))
		case !sets.New(allowed...).Has(string(c.Status)):
			errs = append(errs, field.NotSupported(p.Index(i).Child("status"), c.Status, allowed))
		}
		if seen[c.Type] {
			errs = append(errs, field.Duplicate(p.Index(i).Child("type"), c.Type))
		}
		seen[c.Type] = true
	}
	if seen[certificatesv1.CertificateApproved] && seen[certificatesv1.CertificateDenied] {
		errs = append(errs, field.Invalid(p, certificatesv1.CertificateDenied, "Approved and Denied conditions are mutually exclusive"))
	}
	return errs
}

// CSRConditions returns the conditions of type t.
func CSRConditions(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []certificatesv1.CertificateSigningRequestCondition {
	var out []certificatesv1.CertificateSigningRequestCondition
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			out = append(out, c)
		}
	}
	return out
}

// validatePodCertificateRequest checks the fields a PodCertificateRequest
// must name (TODO: kube also checks the stub PKCS#10 request's key and signature) and
// keeps its spec immutable.
func validatePodCertificateRequest(obj, old runtime.Object) field.ErrorList {
	pcr := obj.(*certificatesv1.PodCertificateRequest)
	spec := field.NewPath("spec")
	if prev, ok := old.(*certificatesv1.PodCertificateRequest); ok {
		if !equality.Semantic.DeepEqual(pcr.Spec, prev.Spec) {
			return field.ErrorList{field.Invalid(spec, "", "field is immutable")}
		}
		return nil
	}
	errs := validateSignerName(spec.Child("signerName"), pcr.Spec.SignerName)
	for _, f := range []struct{ name, value string }{
		{"podName", pcr.Spec.PodName}, {"podUID", string(pcr.Spec.PodUID)},
		{"serviceAccountName", pcr.Spec.ServiceAccountName}, {"serviceAccountUID", string(pcr.Spec.ServiceAccountUID)},
		{"nodeName", string(pcr.Spec.NodeName)}, {"nodeUID", string(pcr.Spec.NodeUID)},
	} {
		if f.value == "" {
			errs = append(errs, field.Required(spec.Child(f.name), ""))
		}
	}
	if len(pcr.Spec.StubPKCS10Request) == 0 {
		errs = append(errs, field.Required(spec.Child("stubPKCS10Request"), ""))
	}
	return errs
}
