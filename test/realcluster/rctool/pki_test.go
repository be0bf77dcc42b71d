package main

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

func TestPKI(t *testing.T) {
	dir := t.TempDir()
	args := []string{"-dir", dir, "-node-name", "n1", "-node-ip", "10.245.0.1",
		"-service-ip", "10.96.0.1", "-server", "https://10.245.0.1:1234"}
	if err := runPKI(args); err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(readCert(t, filepath.Join(dir, "ca.crt")))

	tests := []struct {
		file  string
		cn    string
		org   string
		usage x509.ExtKeyUsage
		ips   []string
	}{
		{"apiserver", "kube-apiserver", "", x509.ExtKeyUsageServerAuth, []string{"127.0.0.1", "10.245.0.1", "10.96.0.1"}},
		{"kubelet", "n1", "", x509.ExtKeyUsageServerAuth, []string{"10.245.0.1"}},
		{"admin", "kubernetes-admin", "system:masters", x509.ExtKeyUsageClientAuth, nil},
		{"kube-proxy", "system:kube-proxy", "", x509.ExtKeyUsageClientAuth, nil},
		{"front-proxy-client", "front-proxy-client", "", x509.ExtKeyUsageClientAuth, nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			c := readCert(t, filepath.Join(dir, tt.file+".crt"))
			if c.Subject.CommonName != tt.cn {
				t.Errorf("CN = %q, want %q", c.Subject.CommonName, tt.cn)
			}
			if tt.org != "" && (len(c.Subject.Organization) != 1 || c.Subject.Organization[0] != tt.org) {
				t.Errorf("O = %v, want %q", c.Subject.Organization, tt.org)
			}
			if _, err := c.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{tt.usage}}); err != nil {
				t.Errorf("verify: %v", err)
			}
			for _, ip := range tt.ips {
				if err := c.VerifyHostname(ip); err != nil {
					t.Errorf("%s: %v", ip, err)
				}
			}
		})
	}

	cfg, err := clientcmd.LoadFromFile(filepath.Join(dir, "kube-proxy.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster].Server; got != "https://10.245.0.1:1234" {
		t.Errorf("kubeconfig server = %q", got)
	}

	// A rerun keeps the CA (and the service account key).
	ca, _ := os.ReadFile(filepath.Join(dir, "ca.crt"))
	sa, _ := os.ReadFile(filepath.Join(dir, "sa.key"))
	if err := runPKI(args); err != nil {
		t.Fatal(err)
	}
	ca2, _ := os.ReadFile(filepath.Join(dir, "ca.crt"))
	sa2, _ := os.ReadFile(filepath.Join(dir, "sa.key"))
	if !bytes.Equal(ca, ca2) || !bytes.Equal(sa, sa2) {
		t.Error("a rerun replaced the CA or the service account key")
	}
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatalf("%s: no PEM", path)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestFree(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if free(l.Addr().(*net.TCPAddr).Port) {
		t.Errorf("port %s in use reported free", l.Addr())
	}
}
