package member_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/certs"
	"github.com/litek8s/litek8s/internal/member/datadir"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// writeServingPair writes a self-signed serving certificate for 127.0.0.1
// named cn into dir.
func writeServingPair(t *testing.T, dir, cn string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: datadir.Serial(), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, cn+".crt"), filepath.Join(dir, cn+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// Issue 17: with --tls-cert-file the API listener serves the operator's
// certificate to clients (the member's kubeconfig trusts it), members keep
// their member certificates between them (m1 joins through m0, writes
// through a follower are forwarded), and a new certificate in the files is
// served after `ctl certs rotate` (the admin endpoint) without a restart.
func TestServingCertificateFromFiles(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := writeServingPair(t, dir, "api-one")
	byo := func(c *member.Config) { c.TLSCertFile, c.TLSKeyFile = certFile, keyFile }
	c := membertest.StartCluster(t, 2, byo) // the joiner fetched the secrets and joined through m0
	ctx := t.Context()
	served := func(i int, sni string) string {
		conn, err := tls.Dial("tcp", c.Config(i).APIAddr, &tls.Config{InsecureSkipVerify: true, ServerName: sni})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].Subject.CommonName
	}
	for i := range c.N() {
		if got := served(i, ""); got != "api-one" {
			t.Errorf("member %d serves %q to clients, want api-one", i, got)
		}
		if got, want := served(i, certs.MemberServerName), c.Config(i).ID; got != want {
			t.Errorf("member %d serves %q to members, want its member certificate %q", i, got, want)
		}
	}
	f := c.Follower()
	if _, err := c.PlainClientset(f).CoreV1().ConfigMaps("default").Create(ctx, configMap("byo", nil), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create through follower %d: %v", f, err)
	}
	sameObjects(t, c, ctx)

	// new files: served after a rotate (the reload timer's minute is not
	// waited for)
	newCert, newKey := writeServingPair(t, dir, "api-two")
	for _, p := range [][2]string{{newCert, certFile}, {newKey, keyFile}} {
		if err := os.Rename(p[0], p[1]); err != nil {
			t.Fatal(err)
		}
	}
	if got := served(0, ""); got != "api-one" {
		t.Fatalf("before the reload member 0 serves %q", got)
	}
	req, err := c.PlainClientset(0).CoreV1().RESTClient().Post().AbsPath("/admin/v1/certs/rotate").DoRaw(ctx)
	if err != nil {
		t.Fatalf("rotate: %v %s", err, req)
	}
	if got := served(0, ""); got != "api-two" {
		t.Errorf("after rotate member 0 serves %q, want api-two", got)
	}
}
