package datadir

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"time"

	"github.com/litek8s/litek8s/internal/kubeletclient"
)

// kubeletClientUser is the user this member is to the kubelets (kubeadm's
// name for kube-apiserver's --kubelet-client-certificate), in
// system:masters: a kubelet that authorizes through this API
// (SubjectAccessReview) lets it read logs, exec and port-forward.
const kubeletClientUser = "kube-apiserver-kubelet-client"

// KubeletClient builds the client of the kubelets: a client certificate
// of the cluster CA issued at start (a year, like the member certificate).
func (s Secrets) KubeletClient() (*kubeletclient.Client, error) {
	ca, err := tls.X509KeyPair(s.CACert, s.CAKey)
	if err != nil {
		return nil, fmt.Errorf("member: cluster CA: %w", err)
	}
	caCert, err := x509.ParseCertificate(ca.Certificate[0])
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: Serial(), Subject: pkix.Name{CommonName: kubeletClientUser, Organization: []string{"system:masters"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(1, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, ca.PrivateKey)
	if err != nil {
		return nil, err
	}
	cfg := kubeletclient.DefaultConfig()
	cfg.ClientCert = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	cfg.ClusterCA = caCert
	return kubeletclient.New(cfg)
}
