package nodeauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// caPEM returns the cluster CA certificate of member i (PEM).
func caPEM(t *testing.T, c *membertest.Cluster, i int) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(filepath.Dir(c.Kubeconfig(i)), "tls", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// clientFor returns a clientset for member i authenticating with cfg's
// credentials only (no admin token); it retries 503s as the cluster
// helper's clients do.
func clientFor(t *testing.T, c *membertest.Cluster, i int, mutate func(*rest.Config)) *kubernetes.Clientset {
	t.Helper()
	cfg := &rest.Config{Host: c.URL(i), QPS: -1, TLSClientConfig: rest.TLSClientConfig{CAData: caPEM(t, c, i)},
		WrapTransport: membertest.RetryUnavailable}
	mutate(cfg)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// withCert authenticates with a client certificate and key (PEM).
func withCert(certPEM, keyPEM []byte) func(*rest.Config) {
	return func(cfg *rest.Config) { cfg.CertData, cfg.KeyData = certPEM, keyPEM }
}

// withToken authenticates with a bearer token.
func withToken(tok string) func(*rest.Config) {
	return func(cfg *rest.Config) { cfg.BearerToken = tok }
}

// newKey returns a P-256 key and its PEM.
func newKey(t *testing.T) (*ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}

// csrPEM is a PEM certificate request for subject cn/orgs with the given
// SANs, signed by key.
func csrPEM(t *testing.T, key *ecdsa.PrivateKey, cn string, orgs []string, dns []string, ips []net.IP) []byte {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: cn, Organization: orgs}, DNSNames: dns, IPAddresses: ips}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// issueCert signs a client certificate for cn/orgs with member i's CA
// (what an administrator hands a node without TLS bootstrap); returns the
// certificate and key (PEM).
func issueCert(t *testing.T, c *membertest.Cluster, i int, cn string, orgs ...string) ([]byte, []byte) {
	t.Helper()
	dir := filepath.Join(filepath.Dir(c.Kubeconfig(i)), "tls")
	ca, err := tls.LoadX509KeyPair(filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(ca.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	key, keyPEM := newKey(t)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, ca.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM
}
