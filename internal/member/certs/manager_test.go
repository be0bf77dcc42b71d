package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/litek8s/litek8s/internal/member/datadir"
)

func testConfig(t *testing.T, dir string) Config {
	t.Helper()
	caCert, caKey, err := datadir.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.ID, cfg.Dir, cfg.CACert, cfg.CAKey = "m0", dir, caCert, caKey
	cfg.IPs, cfg.Names = []net.IP{net.ParseIP("127.0.0.1")}, []string{"localhost"}
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return cfg
}

func serial(m *Manager) string { return serialHex(m.Member().Leaf.SerialNumber) }

func TestKeptCertificateReusedUntilItMustRenew(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	first, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	leaf := first.Member().Leaf
	if got := leaf.NotAfter.Sub(time.Now()); got < DefaultValidity-time.Minute || got > DefaultValidity {
		t.Errorf("lifetime left %s, want about %s", got, DefaultValidity)
	}
	if err := leaf.VerifyHostname(MemberServerName); err != nil {
		t.Errorf("member certificate: %v", err)
	}
	again, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if serial(again) != serial(first) {
		t.Errorf("a restart issued %s, want the kept %s", serial(again), serial(first))
	}

	t.Run("other addresses", func(t *testing.T) {
		c := cfg
		c.Names = []string{"localhost", "m0.example"}
		m, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		if serial(m) == serial(first) || m.Member().Leaf.VerifyHostname("m0.example") != nil {
			t.Errorf("kept certificate %s reused for other names", serial(m))
		}
	})
	t.Run("other CA", func(t *testing.T) {
		c := testConfig(t, cfg.Dir)
		m, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Member().Leaf.CheckSignatureFrom(m.ca.cert); err != nil {
			t.Errorf("kept certificate of the old CA reused: %v", err)
		}
	})
	t.Run("past its renewal time", func(t *testing.T) {
		c := testConfig(t, t.TempDir())
		c.Validity = MinValidity
		ca, err := newIssuer(c.CACert, c.CAKey)
		if err != nil {
			t.Fatal(err)
		}
		old, err := ca.issue(c.ID, c.IPs, c.Names, c.Validity)
		if err != nil {
			t.Fatal(err)
		}
		old.Leaf.NotBefore = time.Now().Add(-time.Hour) // as if issued an hour ago
		if ca.reusable(old.Leaf, c.ID, c.IPs, c.Names) {
			t.Error("a certificate past 2/3 of its lifetime is reusable")
		}
	})
	t.Run("corrupt files", func(t *testing.T) {
		c := testConfig(t, t.TempDir())
		if err := os.WriteFile(filepath.Join(c.Dir, memberCertFile), []byte("junk"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := New(c); err != nil {
			t.Fatalf("corrupt kept certificate: %v, want a new one", err)
		}
		if _, ok, err := loadPair(filepath.Join(c.Dir, memberCertFile), filepath.Join(c.Dir, memberKeyFile)); !ok || err != nil {
			t.Errorf("the new certificate was not kept: %v", err)
		}
	})
}

func TestRotate(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	reg := prometheus.NewRegistry()
	cfg.Metrics = reg
	cfg.Validity = 2 * time.Hour
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	before := m.Member()
	gauge := func() float64 { return expiryGauge(t, reg, CertMember) }
	if g := gauge(); g != float64(before.Leaf.NotAfter.Unix()) {
		t.Errorf("gauge %v, want %v", g, before.Leaf.NotAfter.Unix())
	}
	time.Sleep(1100 * time.Millisecond) // NotAfter has a resolution of a second
	if err := m.Rotate(); err != nil {
		t.Fatal(err)
	}
	after := m.Member()
	if serial(m) == serialHex(before.Leaf.SerialNumber) || !after.Leaf.NotAfter.After(before.Leaf.NotAfter) {
		t.Errorf("rotate: serial %s not after %s, want a later certificate than %s %s", serial(m),
			after.Leaf.NotAfter, serialHex(before.Leaf.SerialNumber), before.Leaf.NotAfter)
	}
	if g := gauge(); g != float64(after.Leaf.NotAfter.Unix()) {
		t.Errorf("gauge %v after rotate, want %v", g, after.Leaf.NotAfter.Unix())
	}
	if got, _ := m.GetClientCertificate(nil); got != after {
		t.Error("GetClientCertificate does not hand out the rotated certificate")
	}
	restarted, err := New(Config{ID: cfg.ID, Dir: cfg.Dir, CACert: cfg.CACert, CAKey: cfg.CAKey, IPs: cfg.IPs,
		Names: cfg.Names, Validity: cfg.Validity, ReloadInterval: time.Minute, Logger: cfg.Logger})
	if err != nil {
		t.Fatal(err)
	}
	if serial(restarted) != serial(m) {
		t.Errorf("restart after rotate: %s, want the rotated %s", serial(restarted), serial(m))
	}
	names := map[string]bool{}
	for _, i := range m.List() {
		names[i.Name] = true
	}
	if !names[CertMember] || !names[CertCA] || names[CertServing] {
		t.Errorf("List names %v, want member and ca", names)
	}
}

// servingPair writes a self-signed serving certificate for name.
func servingPair(t *testing.T, dir, name string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: datadir.Serial(), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{name},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func TestServingCertificate(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	byo := t.TempDir()
	cfg.ServingCertFile, cfg.ServingKeyFile = servingPair(t, byo, "api.example")
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pick := func(sni string) string {
		c, err := m.GetCertificate(&tls.ClientHelloInfo{ServerName: sni})
		if err != nil {
			t.Fatal(err)
		}
		return c.Leaf.Subject.CommonName
	}
	if got := pick("api.example"); got != "api.example" {
		t.Errorf("a client gets %q, want the serving certificate", got)
	}
	if got := pick(""); got != "api.example" {
		t.Errorf("a client without SNI gets %q, want the serving certificate", got)
	}
	if got := pick(MemberServerName); got != "m0" {
		t.Errorf("a member gets %q, want the member certificate", got)
	}

	// the kubeconfig's bundle trusts the self-signed serving certificate
	// and the cluster CA
	bundle := x509.NewCertPool()
	if !bundle.AppendCertsFromPEM(m.ClientCABundle()) {
		t.Fatal("ClientCABundle is not PEM")
	}
	served, _ := m.GetCertificate(&tls.ClientHelloInfo{})
	member, _ := m.GetCertificate(&tls.ClientHelloInfo{ServerName: MemberServerName})
	for _, c := range []*x509.Certificate{served.Leaf, member.Leaf} {
		if _, err := c.Verify(x509.VerifyOptions{Roots: bundle}); err != nil {
			t.Errorf("ClientCABundle does not verify %s: %v", c.Subject, err)
		}
	}

	// a new pair in the files is picked up; a broken one keeps the old
	servingPair(t, byo, "api2.example")
	if changed, err := m.reloadServing(); !changed || err != nil {
		t.Fatalf("reload: changed %v, %v", changed, err)
	}
	if got := pick(""); got != "api2.example" {
		t.Errorf("after reload a client gets %q, want api2.example", got)
	}
	if err := os.WriteFile(cfg.ServingKeyFile, []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := m.reloadServing(); !errors.Is(err, ErrInvalid) {
		t.Errorf("reload of a broken key: %v, want ErrInvalid", err)
	}
	if got := pick(""); got != "api2.example" {
		t.Errorf("after a broken reload a client gets %q, want the last good api2.example", got)
	}
}

func TestConfigValidate(t *testing.T) {
	for name, f := range map[string]func(*Config){
		"short validity": func(c *Config) { c.Validity = time.Second },
		"cert file only": func(c *Config) { c.ServingCertFile = "x" },
		"no CA":          func(c *Config) { c.CAKey = nil },
		"no reload":      func(c *Config) { c.ReloadInterval = 0 },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig(t, t.TempDir())
			f(&cfg)
			if _, err := New(cfg); !errors.Is(err, ErrInvalid) {
				t.Errorf("New: %v, want ErrInvalid", err)
			}
		})
	}
}

// expiryGauge reads the expiry gauge of cert from reg.
func expiryGauge(t *testing.T, reg *prometheus.Registry, cert string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "litek8s_certificate_expiry_timestamp_seconds" {
			continue
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "cert" && l.GetValue() == cert {
					return s.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("no litek8s_certificate_expiry_timestamp_seconds{cert=%q}", cert)
	return 0
}
