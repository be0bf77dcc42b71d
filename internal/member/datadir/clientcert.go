package datadir

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"time"
)

// ClientCert issues a client certificate of the cluster CA for user cn in
// groups orgs, valid for ttl: what the admin kubeconfigs hold (kubeadm's
// admin.conf holds one too). PEM certificate and key.
func (s Secrets) ClientCert(cn string, orgs []string, ttl time.Duration) (certPEM, keyPEM []byte, err error) {
	ca, err := tls.X509KeyPair(s.CACert, s.CAKey)
	if err != nil {
		return nil, nil, fmt.Errorf("member: cluster CA: %w", err)
	}
	caCert, err := x509.ParseCertificate(ca.Certificate[0])
	if err != nil {
		return nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: Serial(), Subject: pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore: now.Add(-5 * time.Minute), NotAfter: now.Add(ttl),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if caCert.NotAfter.Before(tmpl.NotAfter) {
		tmpl.NotAfter = caCert.NotAfter
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, ca.PrivateKey)
	if err != nil {
		return nil, nil, err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), nil
}
