package csr

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
)

func request(t *testing.T, cn string, orgs, dns []string, ips []net.IP) *x509.CertificateRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: cn, Organization: orgs}, DNSNames: dns, IPAddresses: ips}, key)
	if err != nil {
		t.Fatal(err)
	}
	req, err := x509.ParseCertificateRequest(der)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestSignerRules(t *testing.T) {
	nodes := []string{"system:nodes"}
	client := []certificatesv1.KeyUsage{"digital signature", "client auth"}
	serving := []certificatesv1.KeyUsage{"digital signature", "key encipherment", "server auth"}
	ip := []net.IP{net.ParseIP("10.0.0.1")}
	for _, c := range []struct {
		name   string
		check  func(*x509.CertificateRequest, []certificatesv1.KeyUsage) string
		req    *x509.CertificateRequest
		usages []certificatesv1.KeyUsage
		ok     bool
	}{
		{"kubelet client", kubeletClientError, request(t, "system:node:n1", nodes, nil, nil), client, true},
		{"kubelet client with SAN", kubeletClientError, request(t, "system:node:n1", nodes, []string{"n1"}, nil), client, false},
		{"kubelet client other group", kubeletClientError, request(t, "system:node:n1", []string{"system:masters"}, nil, nil), client, false},
		{"kubelet client not a node", kubeletClientError, request(t, "bob", nodes, nil, nil), client, false},
		{"kubelet client serving usage", kubeletClientError, request(t, "system:node:n1", nodes, nil, nil), serving, false},
		{"kubelet serving", kubeletServingError, request(t, "system:node:n1", nodes, []string{"n1"}, ip), serving, true},
		{"kubelet serving without SAN", kubeletServingError, request(t, "system:node:n1", nodes, nil, nil), serving, false},
		{"kubelet serving client usage", kubeletServingError, request(t, "system:node:n1", nodes, nil, ip), client, false},
		{"apiserver client", clientError, request(t, "bob", []string{"devs"}, nil, nil), client, true},
		{"apiserver client serving usage", clientError, request(t, "bob", nil, nil, nil), serving, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if why := c.check(c.req, c.usages); (why == "") != c.ok {
				t.Errorf("check = %q, want ok %v", why, c.ok)
			}
		})
	}
}

func TestIssue(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := ParseCA(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	if err != nil {
		t.Fatal(err)
	}
	s := &signer{cfg: DefaultConfig(), ca: ca, now: func() time.Time { return now }}
	req := request(t, "system:node:n1", []string{"system:nodes"}, []string{"n1"}, []net.IP{net.ParseIP("10.0.0.1")})
	hour := int32(3600)
	csr := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{ExpirationSeconds: &hour,
		Usages: []certificatesv1.KeyUsage{"digital signature", "server auth"}}}
	out, err := s.issue(req, csr)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := cert.CheckSignatureFrom(ca.Cert); err != nil {
		t.Errorf("not signed by the CA: %v", err)
	}
	if got := cert.NotAfter.Sub(now); got < 59*time.Minute || got > time.Hour {
		t.Errorf("valid for %v, want the requested hour", got)
	}
	if cert.Subject.CommonName != "system:node:n1" || len(cert.DNSNames) != 1 || len(cert.IPAddresses) != 1 ||
		cert.KeyUsage != x509.KeyUsageDigitalSignature || len(cert.ExtKeyUsage) != 1 || cert.ExtKeyUsage[0] != x509.ExtKeyUsageServerAuth {
		t.Errorf("certificate %v %v %v %v %v", cert.Subject, cert.DNSNames, cert.IPAddresses, cert.KeyUsage, cert.ExtKeyUsage)
	}
	// a year asked of a CA that ends in two days: capped at the CA's end
	csr.Spec.ExpirationSeconds = nil
	out, err = s.issue(req, csr)
	if err != nil {
		t.Fatal(err)
	}
	if cert, err = x509.ParseCertificate(out); err != nil || !cert.NotAfter.Equal(ca.Cert.NotAfter) {
		t.Errorf("NotAfter %v, want the CA's %v (%v)", cert.NotAfter, ca.Cert.NotAfter, err)
	}
}
