package kubeletclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Config configures a Client. Start from DefaultConfig.
type Config struct {
	// ClientCert authenticates this member to the kubelets (kube's
	// --kubelet-client-certificate: user kube-apiserver-kubelet-client).
	ClientCert tls.Certificate
	// ClusterCA is the cluster CA certificate: a kubelet serving
	// certificate it signed is verified against it (name included);
	// another one (the kubelet's self-signed default) is accepted
	// unverified, as kube-apiserver does without
	// --kubelet-certificate-authority.
	ClusterCA *x509.Certificate
	// PreferredAddressTypes is the order in which a Node's addresses are
	// tried (kube's --kubelet-preferred-address-types).
	PreferredAddressTypes []corev1.NodeAddressType
	// DefaultPort is the kubelet port of a Node that reports none (10250).
	DefaultPort int
	// DialTimeout bounds connecting to a backend.
	DialTimeout time.Duration
}

// DefaultConfig returns the defaults (without a certificate): kubeadm's
// address order (--kubelet-preferred-address-types=InternalIP,ExternalIP,
// Hostname), which does not depend on node names resolving as
// kube-apiserver's own default (Hostname first) does.
func DefaultConfig() Config {
	return Config{
		PreferredAddressTypes: []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeExternalIP,
			corev1.NodeHostName},
		DefaultPort: 10250, DialTimeout: 30 * time.Second,
	}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	switch {
	case len(c.ClientCert.Certificate) == 0 || c.ClientCert.PrivateKey == nil:
		return errors.New("kubeletclient: ClientCert is required")
	case c.ClusterCA == nil:
		return errors.New("kubeletclient: ClusterCA is required")
	case len(c.PreferredAddressTypes) == 0:
		return errors.New("kubeletclient: PreferredAddressTypes is required")
	case c.DefaultPort <= 0 || c.DefaultPort > 65535:
		return fmt.Errorf("kubeletclient: DefaultPort %d is not a port", c.DefaultPort)
	case c.DialTimeout <= 0:
		return errors.New("kubeletclient: DialTimeout must be positive")
	}
	return nil
}

// Client reaches kubelets and pods. Its transports speak HTTP/1.1 only:
// protocol upgrades (SPDY, WebSocket) need it.
type Client struct {
	cfg Config
	// kubelet verifies a kubelet the cluster CA signed; insecure never
	// verifies (pods/log's insecureSkipTLSVerifyBackend); backend reaches
	// pods and services (http, or https unverified, as kube's proxy
	// transport) without a client certificate.
	kubelet, insecure, backend *http.Transport
}

// New builds a Client.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AddCert(cfg.ClusterCA)
	// InsecureSkipVerify: the kubelet's certificate is checked by
	// verifyIfSignedBy (per connection, which knows the host) or not at
	// all, as kube-apiserver does.
	client := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cfg.ClientCert},
		InsecureSkipVerify: true}
	backend := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true}
	verify := func(host string) func(tls.ConnectionState) error { return verifyIfSignedBy(cfg.ClusterCA, roots, host) }
	return &Client{cfg: cfg, kubelet: cfg.transport(client, verify), insecure: cfg.transport(client, nil),
		backend: cfg.transport(backend, nil)}, nil
}

// transport dials with tc (HTTP/1.1 only) and, when verify is set, checks
// each connection with verify(host).
func (c *Config) transport(tc *tls.Config, verify func(host string) func(tls.ConnectionState) error) *http.Transport {
	dialer := &net.Dialer{Timeout: c.DialTimeout, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:       nil, // the backends are reached directly, never through $HTTPS_PROXY
		DialContext: dialer.DialContext,
		DialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			cfg := tc.Clone()
			cfg.ServerName, cfg.NextProtos = host, []string{"http/1.1"}
			if verify != nil {
				cfg.VerifyConnection = verify(host)
			}
			d := &tls.Dialer{NetDialer: dialer, Config: cfg}
			return d.DialContext(ctx, network, addr)
		},
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     90 * time.Second,
	}
}

// KubeletTransport reaches kubelets; insecure skips verifying the
// kubelet's serving certificate even when the cluster CA signed it.
func (c *Client) KubeletTransport(insecure bool) http.RoundTripper {
	if insecure {
		return c.insecure
	}
	return c.kubelet
}

// BackendTransport reaches pods and service endpoints (http, or https
// without verification).
func (c *Client) BackendTransport() http.RoundTripper { return c.backend }

// CloseIdleConnections closes the idle connections of every transport.
func (c *Client) CloseIdleConnections() {
	for _, t := range []*http.Transport{c.kubelet, c.insecure, c.backend} {
		t.CloseIdleConnections()
	}
}

// verifyIfSignedBy verifies a serving certificate that ca signed (chain
// and name); one it did not sign is accepted.
func verifyIfSignedBy(ca *x509.Certificate, roots *x509.CertPool, host string) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("kubeletclient: the kubelet sent no certificate")
		}
		leaf := cs.PeerCertificates[0]
		if leaf.CheckSignatureFrom(ca) != nil {
			return nil
		}
		inter := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		_, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, Intermediates: inter,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		return err
	}
}
