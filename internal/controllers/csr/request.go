package csr

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// What kube calls the signers and node identities.
const (
	signerClient        = "kubernetes.io/kube-apiserver-client"
	signerKubeletClient = "kubernetes.io/kube-apiserver-client-kubelet"
	signerKubeletServe  = "kubernetes.io/kubelet-serving"
	nodePrefix          = "system:node:"
	nodesGroup          = "system:nodes"
)

// parseRequest decodes the PEM CERTIFICATE REQUEST of csr.
func parseRequest(csr *certificatesv1.CertificateSigningRequest) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}

// condition reports whether csr has a condition of type t.
func condition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	return slices.ContainsFunc(csr.Status.Conditions, func(c certificatesv1.CertificateSigningRequestCondition) bool {
		return c.Type == t
	})
}

// usagesWithin reports whether every usage is one of allowed and required
// is among them.
func usagesWithin(usages []certificatesv1.KeyUsage, required certificatesv1.KeyUsage, allowed ...certificatesv1.KeyUsage) bool {
	for _, u := range usages {
		if !slices.Contains(allowed, u) {
			return false
		}
	}
	return slices.Contains(usages, required)
}

// kubeletClientError says why req is not a kubelet client certificate
// request ("" when it is): CN system:node:<name>, O exactly system:nodes,
// no SANs, usages client auth and digital signature (key encipherment
// allowed).
func kubeletClientError(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) string {
	switch {
	case !slices.Equal(req.Subject.Organization, []string{nodesGroup}):
		return "subject organization is not system:nodes"
	case !strings.HasPrefix(req.Subject.CommonName, nodePrefix) || req.Subject.CommonName == nodePrefix:
		return `subject common name does not begin with "system:node:"`
	case len(req.DNSNames) > 0 || len(req.EmailAddresses) > 0 || len(req.IPAddresses) > 0 || len(req.URIs) > 0:
		return "DNS, email, IP and URI subjectAltNames are not allowed"
	case !usagesWithin(usages, certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature,
		certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth):
		return "usages must be client auth and digital signature, and may include key encipherment"
	}
	return ""
}

// kubeletServingError says why req is not a kubelet serving certificate
// request: CN system:node:<name>, O exactly system:nodes, at least one DNS
// or IP SAN and no email or URI, usages server auth and digital signature
// (key encipherment allowed).
func kubeletServingError(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) string {
	switch {
	case !slices.Equal(req.Subject.Organization, []string{nodesGroup}):
		return "subject organization is not system:nodes"
	case !strings.HasPrefix(req.Subject.CommonName, nodePrefix) || req.Subject.CommonName == nodePrefix:
		return `subject common name does not begin with "system:node:"`
	case len(req.DNSNames) == 0 && len(req.IPAddresses) == 0:
		return "DNS or IP subjectAltName is required"
	case len(req.EmailAddresses) > 0 || len(req.URIs) > 0:
		return "email and URI subjectAltNames are not allowed"
	case !usagesWithin(usages, certificatesv1.UsageServerAuth, certificatesv1.UsageDigitalSignature,
		certificatesv1.UsageKeyEncipherment, certificatesv1.UsageServerAuth):
		return "usages must be server auth and digital signature, and may include key encipherment"
	}
	return ""
}

// clientError says why req is not a kube-apiserver client certificate
// request: usages client auth (digital signature and key encipherment
// allowed).
func clientError(_ *x509.CertificateRequest, usages []certificatesv1.KeyUsage) string {
	if !usagesWithin(usages, certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature,
		certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth) {
		return "usages must include client auth, and may include digital signature and key encipherment"
	}
	return ""
}
