package datadir

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"
)

// FrontProxyClientName is the CN of the front-proxy client certificate
// (kube's requestheader-allowed-names).
const FrontProxyClientName = "front-proxy-client"

// FrontProxyCA returns the front-proxy CA (kube's requestheader client
// CA, separate from the cluster CA so that no certificate the cluster CA
// signs, a CSR's for one, can act as the front proxy). Its key is derived
// from the cluster CA key (HKDF-SHA256), so that every member holds the
// same CA without a new secret to replicate; its certificate is built
// the same way on every member (fixed serial, subject and validity: the
// cluster CA's).
func (s Secrets) FrontProxyCA() (*x509.Certificate, *ecdsa.PrivateKey, error) {
	ca, err := tls.X509KeyPair(s.CACert, s.CAKey)
	if err != nil {
		return nil, nil, fmt.Errorf("member: cluster CA: %w", err)
	}
	caCert, err := x509.ParseCertificate(ca.Certificate[0])
	if err != nil {
		return nil, nil, err
	}
	seed, err := hkdf.Key(sha256.New, s.CAKey, nil, "litek8s front-proxy CA key", 32)
	if err != nil {
		return nil, nil, err
	}
	// A P-256 scalar must be below the order: reduce it (the bias is
	// negligible) and keep it non-zero.
	n := new(big.Int).SetBytes(seed)
	n.Mod(n, new(big.Int).Sub(elliptic.P256().Params().N, big.NewInt(1)))
	n.Add(n, big.NewInt(1))
	key, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), n.FillBytes(make([]byte, 32)))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1),
		Subject:   pkix.Name{CommonName: "front-proxy-ca", Organization: caCert.Subject.Organization},
		NotBefore: caCert.NotBefore, NotAfter: caCert.NotAfter, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

// FrontProxyClient issues the member's front-proxy client certificate
// (CN front-proxy-client) of the front-proxy CA, valid for ttl, and
// returns it with the CA's PEM (what the member publishes as
// requestheader-client-ca-file).
func (s Secrets) FrontProxyClient(ttl time.Duration) (*tls.Certificate, []byte, error) {
	ca, caKey, err := s.FrontProxyCA()
	if err != nil {
		return nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: Serial(), Subject: pkix.Name{CommonName: FrontProxyClientName},
		NotBefore: now.Add(-5 * time.Minute), NotAfter: now.Add(ttl),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if ca.NotAfter.Before(tmpl.NotAfter) {
		tmpl.NotAfter = ca.NotAfter
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})
	return &tls.Certificate{Certificate: [][]byte{der, ca.Raw}, PrivateKey: key, Leaf: leaf}, caPEM, nil
}
