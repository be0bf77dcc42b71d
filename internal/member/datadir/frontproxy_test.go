package datadir

import (
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"
)

// Two members issue front-proxy client certificates on their own: each
// verifies against the CA the other publishes, and not against the
// cluster CA (nor the cluster CA's certificates against the front-proxy
// CA).
func TestFrontProxyCAIsSharedAndSeparate(t *testing.T) {
	caCert, caKey, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	sec := Secrets{CACert: caCert, CAKey: caKey}
	a, caA, err := sec.FrontProxyClient(time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	b, caB, err := sec.FrontProxyClient(time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if a.Leaf.Subject.CommonName != FrontProxyClientName {
		t.Fatalf("CN %q", a.Leaf.Subject.CommonName)
	}
	for _, c := range []struct {
		leaf *x509.Certificate
		ca   []byte
	}{{a.Leaf, caB}, {b.Leaf, caA}} {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(c.ca)
		if _, err := c.leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Fatalf("a member's front-proxy certificate does not verify with another member's CA: %v", err)
		}
	}
	cluster := x509.NewCertPool()
	cluster.AppendCertsFromPEM(caCert)
	if _, err := a.Leaf.Verify(x509.VerifyOptions{Roots: cluster, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Fatal("the front-proxy certificate verifies with the cluster CA")
	}
	certPEM, _, err := sec.ClientCert(FrontProxyClientName, nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	fp := x509.NewCertPool()
	fp.AppendCertsFromPEM(caA)
	block, _ := pem.Decode(certPEM)
	cc, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cc.Verify(x509.VerifyOptions{Roots: fp, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Fatal("a cluster-CA certificate named front-proxy-client verifies with the front-proxy CA")
	}
}
