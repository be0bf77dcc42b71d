package member_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/datadir"
)

// A cluster bootstrapped with a given CA (what the Helm chart generates at
// install) serves with certificates of that CA: a client that trusts only
// it verifies the member, and a joiner receives it.
func TestGivenCA(t *testing.T) {
	caCert, caKey, err := datadir.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	cfgs := bootstrapConfigs(t, 1)
	cfg := cfgs[0]
	cfg.BootstrapExpect, cfg.Peers = 0, nil
	cfg.CACert, cfg.CAKey = caCert, caKey
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	m, err := member.Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sec, _, err := datadir.LoadSecrets(cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	if string(sec.CACert) != string(caCert) {
		t.Fatalf("the member's CA is not the given one:\n%s", sec.CACert)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caCert)
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer c.CloseIdleConnections()
	resp, err := c.Get(m.URL() + "/readyz")
	if err != nil {
		t.Fatalf("a client trusting only the given CA: %v", err)
	}
	resp.Body.Close()
}

func TestGivenCARefused(t *testing.T) {
	caCert, caKey, err := datadir.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	otherCert, _, err := datadir.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	// a certificate that is not a CA
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: datadir.Serial(), Subject: pkix.Name{CommonName: "leaf"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	kb, _ := x509.MarshalECPrivateKey(key)
	leaf := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	leafKey := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
	for _, tc := range []struct {
		name       string
		cert, key  []byte
		wantSubstr string
	}{
		{"certificate alone", caCert, nil, "both"},
		{"key alone", nil, caKey, "both"},
		{"key of another CA", otherCert, caKey, "the given CA"},
		{"not a CA", leaf, leafKey, "not a CA"},
		{"not PEM", []byte("junk"), []byte("junk"), "the given CA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := member.DefaultConfig()
			cfg.CACert, cfg.CAKey = tc.cert, tc.key
			err := cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.wantSubstr) {
				t.Fatalf("Validate() = %v, want an error saying %q", err, tc.wantSubstr)
			}
		})
	}
}
