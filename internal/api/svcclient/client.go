package svcclient

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Target is where a call goes: exactly one of URL and Service.
type Target struct {
	// URL is an https URL (webhooks' clientConfig.url).
	URL string
	// Service is resolved through its EndpointSlices.
	Service *ServiceRef
	// CABundle verifies the server (PEM); empty: the system roots.
	CABundle []byte
	// InsecureSkipTLSVerify skips verification (apiregistration only).
	InsecureSkipTLSVerify bool
}

// Clients hands out HTTP clients for targets: one transport per (CA
// bundle, server name, skip-verify), kept alive across calls. The zero
// value is not usable: use New.
type Clients struct {
	rd Reader
	// cert is the client certificate presented to every server (kube's
	// front-proxy client for aggregated APIs; nil: none).
	cert func() (*tls.Certificate, error)

	mu         sync.Mutex
	transports map[transportKey]*http.Transport
}

type transportKey struct {
	ca         [32]byte
	serverName string
	insecure   bool
}

// New returns Clients that resolve Services through rd and present the
// certificate cert returns (nil: no client certificate).
func New(rd Reader, cert func() (*tls.Certificate, error)) *Clients {
	return &Clients{rd: rd, cert: cert, transports: map[transportKey]*http.Transport{}}
}

// Request builds a request to t: for a Service, the URL's host is the
// resolved endpoint and the TLS server name <svc>.<ns>.svc. path is
// appended to the target's own path. It returns the client to send it
// with.
func (c *Clients) Request(ctx context.Context, t Target, method, path string) (*http.Client, *http.Request, error) {
	var u *url.URL
	var serverName string
	switch {
	case t.Service != nil:
		addr, err := Resolve(ctx, c.rd, *t.Service)
		if err != nil {
			return nil, nil, err
		}
		u = &url.URL{Scheme: "https", Host: addr, Path: t.Service.Path}
		serverName = t.Service.ServerName()
	case t.URL != "":
		var err error
		if u, err = url.Parse(t.URL); err != nil {
			return nil, nil, err
		}
		if u.Scheme != "https" {
			return nil, nil, fmt.Errorf("svcclient: %q is not an https URL", t.URL)
		}
		serverName = u.Hostname()
	default:
		return nil, nil, errors.New("svcclient: neither a URL nor a Service")
	}
	u.Path += path
	tr, err := c.transport(t, serverName)
	if err != nil {
		return nil, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		return nil, nil, err
	}
	return &http.Client{Transport: tr}, req, nil
}

func (c *Clients) transport(t Target, serverName string) (*http.Transport, error) {
	k := transportKey{ca: sha256.Sum256(t.CABundle), serverName: serverName, insecure: t.InsecureSkipTLSVerify}
	c.mu.Lock()
	defer c.mu.Unlock()
	if tr := c.transports[k]; tr != nil {
		return tr, nil
	}
	tc := &tls.Config{ServerName: serverName, InsecureSkipVerify: t.InsecureSkipTLSVerify, MinVersion: tls.VersionTLS12}
	if len(t.CABundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(t.CABundle) {
			return nil, errors.New("svcclient: the caBundle holds no PEM certificate")
		}
		tc.RootCAs = pool
	}
	if c.cert != nil {
		tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return c.cert() }
	}
	tr := &http.Transport{
		TLSClientConfig:     tc,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	c.transports[k] = tr
	return tr, nil
}

// Close closes the idle connections of every transport.
func (c *Clients) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, tr := range c.transports {
		tr.CloseIdleConnections()
	}
}
