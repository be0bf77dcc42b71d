package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// pkiConfig is what runPKI needs to know about the cluster.
type pkiConfig struct {
	Dir       string
	NodeName  string
	NodeIP    string
	ServiceIP string // first IP of the service CIDR (the kubernetes Service)
	Server    string // apiserver URL written into the kubeconfigs
}

// client is a client certificate and the kubeconfig that carries it.
type client struct {
	file   string // base name: <file>.crt, <file>.key, <file>.kubeconfig
	cn     string
	groups []string
}

// runPKI writes ca.{crt,key}, apiserver.{crt,key}, kubelet.{crt,key} (the
// kubelet's serving certificate), sa.{key,pub} and, for every client, a
// certificate and a kubeconfig. An existing CA is reused so that a rerun
// keeps every kubeconfig handed out before valid.
func runPKI(args []string) error {
	var c pkiConfig
	fs := flag.NewFlagSet("pki", flag.ContinueOnError)
	fs.StringVar(&c.Dir, "dir", "", "output directory")
	fs.StringVar(&c.NodeName, "node-name", "", "node name")
	fs.StringVar(&c.NodeIP, "node-ip", "", "node IP")
	fs.StringVar(&c.ServiceIP, "service-ip", "", "ClusterIP of the kubernetes Service")
	fs.StringVar(&c.Server, "server", "", "apiserver URL for kubeconfigs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.Dir == "" || c.NodeName == "" || c.Server == "" ||
		net.ParseIP(c.NodeIP) == nil || net.ParseIP(c.ServiceIP) == nil {
		return errors.New("pki: -dir, -node-name, -node-ip, -service-ip and -server are required")
	}
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return err
	}
	ca, caKey, err := loadOrCreateCA(c.Dir)
	if err != nil {
		return err
	}
	serving := []struct {
		file  string
		cn    string
		dns   []string
		ips   []string
		extra []x509.ExtKeyUsage
	}{
		{"apiserver", "kube-apiserver", []string{"localhost", "kubernetes", "kubernetes.default",
			"kubernetes.default.svc", "kubernetes.default.svc.cluster.local", c.NodeName},
			[]string{"127.0.0.1", "::1", c.NodeIP, c.ServiceIP}, nil},
		{"kubelet", c.NodeName, []string{c.NodeName, "localhost"},
			[]string{"127.0.0.1", c.NodeIP}, nil},
	}
	for _, s := range serving {
		tmpl := leafTemplate(s.cn, nil, x509.ExtKeyUsageServerAuth)
		tmpl.DNSNames = s.dns
		for _, ip := range s.ips {
			tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
		}
		if err := writeLeaf(c.Dir, s.file, tmpl, ca, caKey); err != nil {
			return err
		}
	}
	clients := []client{
		{"admin", "kubernetes-admin", []string{"system:masters"}},
		{"apiserver-kubelet-client", "kube-apiserver-kubelet-client", []string{"system:masters"}},
		{"controller-manager", "system:kube-controller-manager", nil},
		{"scheduler", "system:kube-scheduler", nil},
		{"kube-proxy", "system:kube-proxy", nil},
		// The apiserver's client certificate towards aggregated APIs
		// (--proxy-client-cert-file), trusted through the requestheader CA.
		{"front-proxy-client", "front-proxy-client", nil},
	}
	caPEM, err := os.ReadFile(filepath.Join(c.Dir, "ca.crt"))
	if err != nil {
		return err
	}
	for _, cl := range clients {
		tmpl := leafTemplate(cl.cn, cl.groups, x509.ExtKeyUsageClientAuth)
		if err := writeLeaf(c.Dir, cl.file, tmpl, ca, caKey); err != nil {
			return err
		}
		if err := writeKubeconfig(c, cl, caPEM); err != nil {
			return err
		}
	}
	return writeSAKey(c.Dir)
}

func loadOrCreateCA(dir string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	crtPath, keyPath := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	if crtPEM, err := os.ReadFile(crtPath); err == nil {
		keyPEM, err := os.ReadFile(keyPath)
		if err != nil {
			return nil, nil, err
		}
		return parsePair(crtPEM, keyPEM)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "litek8s-realcluster-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	if err := writePEM(crtPath, "CERTIFICATE", der, 0o644); err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	if err := writePEM(keyPath, "EC PRIVATE KEY", keyDER, 0o600); err != nil {
		return nil, nil, err
	}
	crt, err := x509.ParseCertificate(der)
	return crt, key, err
}

func parsePair(crtPEM, keyPEM []byte) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	cb, _ := pem.Decode(crtPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, errors.New("pki: bad CA PEM")
	}
	crt, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	return crt, key, err
}

func leafTemplate(cn string, org []string, usage x509.ExtKeyUsage) *x509.Certificate {
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn, Organization: org},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
}

func writeLeaf(dir, file string, tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("pki: sign %s: %w", file, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, file+".crt"), "CERTIFICATE", der, 0o644); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, file+".key"), "EC PRIVATE KEY", keyDER, 0o600)
}

func writeKubeconfig(c pkiConfig, cl client, caPEM []byte) error {
	crt, err := os.ReadFile(filepath.Join(c.Dir, cl.file+".crt"))
	if err != nil {
		return err
	}
	key, err := os.ReadFile(filepath.Join(c.Dir, cl.file+".key"))
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["realcluster"] = &clientcmdapi.Cluster{Server: c.Server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[cl.cn] = &clientcmdapi.AuthInfo{ClientCertificateData: crt, ClientKeyData: key}
	cfg.Contexts["realcluster"] = &clientcmdapi.Context{Cluster: "realcluster", AuthInfo: cl.cn}
	cfg.CurrentContext = "realcluster"
	return clientcmd.WriteToFile(*cfg, filepath.Join(c.Dir, cl.file+".kubeconfig"))
}

// writeSAKey writes the service account token signing key pair once.
func writeSAKey(dir string) error {
	keyPath := filepath.Join(dir, "sa.key")
	if _, err := os.Stat(keyPath); err == nil {
		return nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	if err := writePEM(keyPath, "EC PRIVATE KEY", keyDER, 0o600); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, "sa.pub"), "PUBLIC KEY", pubDER, 0o644)
}

func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}
