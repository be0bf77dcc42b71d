package registry

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
)

func TestValidateCSR(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "x"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	req := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
	good := func() *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{Request: req,
			SignerName: "example.com/signer", Usages: []certificatesv1.KeyUsage{"client auth"}}}
	}
	approved := certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}
	for _, c := range []struct {
		name   string
		mutate func(*certificatesv1.CertificateSigningRequest)
		old    *certificatesv1.CertificateSigningRequest
		want   string // "" valid
	}{
		{"valid", func(*certificatesv1.CertificateSigningRequest) {}, nil, ""},
		{"not a CSR", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Request = []byte("hello") }, nil, "spec.request"},
		{"no signer", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "" }, nil, "spec.signerName: Required"},
		{"unqualified signer", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "signer" }, nil,
			"must be a fully qualified domain and path"},
		{"legacy signer", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "kubernetes.io/legacy-unknown" }, nil,
			"the legacy signerName is not allowed"},
		{"no usages", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Usages = nil }, nil, "spec.usages: Required"},
		{"unknown usage", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Usages = []certificatesv1.KeyUsage{"fly"} }, nil,
			"spec.usages[0]: Unsupported value"},
		{"short expiry", func(c *certificatesv1.CertificateSigningRequest) { s := int32(60); c.Spec.ExpirationSeconds = &s }, nil,
			"may not specify a duration less than 600 seconds"},
		{"approved and denied", func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{approved,
				{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue}}
		}, nil, "Approved and Denied conditions are mutually exclusive"},
		{"approval removed", func(*certificatesv1.CertificateSigningRequest) {},
			&certificatesv1.CertificateSigningRequest{Status: certificatesv1.CertificateSigningRequestStatus{
				Conditions: []certificatesv1.CertificateSigningRequestCondition{approved}}},
			`updates may not remove a condition of type "Approved"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			csr := good()
			c.mutate(csr)
			var errs string
			var agg interface{ Error() string }
			if c.old != nil {
				agg = validateCSR(csr, c.old).ToAggregate()
			} else {
				agg = validateCSR(csr, nil).ToAggregate()
			}
			if agg != nil {
				errs = agg.Error()
			}
			if c.want == "" && errs != "" || c.want != "" && !strings.Contains(errs, c.want) {
				t.Errorf("validateCSR = %q, want %q", errs, c.want)
			}
		})
	}
}

func TestValidateClusterTrustBundle(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert := func(ca bool) string {
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "x"}, IsCA: ca,
			BasicConstraintsValid: true, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			t.Fatal(err)
		}
		return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	}
	ca := cert(true)
	for _, c := range []struct {
		name, objName, signer, bundle string
		want                          string
	}{
		{"no signer", "roots", "", ca, ""},
		{"signer prefix", "example.com:signer:roots", "example.com/signer", ca, ""},
		{"missing prefix", "roots", "example.com/signer", ca, "must be named with prefix example.com:signer:"},
		{"colon without signer", "a:b", "", ca, `must not have ":" in its name`},
		{"not a CA", "roots", "", cert(false), "entry 0 does not have the CA bit set"},
		{"empty", "roots", "", "", "at least one trust anchor must be provided"},
		{"twice", "roots", "", ca + ca, "duplicate trust anchor"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &certificatesv1.ClusterTrustBundle{Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: c.signer, TrustBundle: c.bundle}}
			b.Name = c.objName
			errs := ""
			if agg := validateClusterTrustBundle(b, nil).ToAggregate(); agg != nil {
				errs = agg.Error()
			}
			if c.want == "" && errs != "" || c.want != "" && !strings.Contains(errs, c.want) {
				t.Errorf("validateClusterTrustBundle = %q, want %q", errs, c.want)
			}
		})
	}
}
