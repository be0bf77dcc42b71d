package member

import (
	"context"
	"crypto/tls"
	"sync"
	"time"

	"github.com/litek8s/litek8s/internal/api/aggregator"
	"github.com/litek8s/litek8s/internal/member/datadir"
)

// frontProxyTTL is the front-proxy client certificate's validity; it is
// renewed when a third of it is left.
const frontProxyTTL = 30 * 24 * time.Hour

// frontProxy holds the member's front-proxy client certificate, which the
// aggregator presents to aggregated API servers.
type frontProxy struct {
	sec datadir.Secrets
	// mu protects cert and caPEM.
	mu    sync.Mutex
	cert  *tls.Certificate
	caPEM []byte
}

// Cert returns the certificate, issuing a new one when none is held or
// the held one nears its end.
func (f *frontProxy) Cert() (*tls.Certificate, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cert != nil && time.Until(f.cert.Leaf.NotAfter) > frontProxyTTL/3 {
		return f.cert, nil
	}
	cert, caPEM, err := f.sec.FrontProxyClient(frontProxyTTL)
	if err != nil {
		return nil, err
	}
	f.cert, f.caPEM = cert, caPEM
	return cert, nil
}

// CA returns the front-proxy CA's PEM (requestheader-client-ca-file).
func (f *frontProxy) CA() ([]byte, error) {
	if _, err := f.Cert(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.caPEM, nil
}

// publishAuthentication creates kube-system/extension-apiserver-authentication
// (the cluster CA, the front-proxy CA and the requestheader settings)
// unless it exists. Leader only.
func (m *Member) publishAuthentication(ctx context.Context) error {
	caPEM, err := m.frontProxy.CA()
	if err != nil {
		return err
	}
	cm := aggregator.AuthenticationConfigMap(m.frontProxy.sec.CACert, caPEM, []string{datadir.FrontProxyClientName})
	return m.api.EnsureObject(ctx, "v1", "configmaps", cm)
}
