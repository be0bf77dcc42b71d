package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// endpoint is one server the load clients talk to (a member or the static
// server): its URL and a transport of HTTP/1.1 keep-alive connections.
type endpoint struct {
	name    string
	url     string
	token   string
	tr      *http.Transport
	hc      *http.Client
	timeout time.Duration // of one request (-timeout); watches have none
}

// newTransport returns the load clients' transport: HTTP/1.1 only
// (ForceAttemptHTTP2 off and an empty TLSNextProto, so ALPN never offers
// h2), keep-alive with room for every client's connection, and no gzip
// (responses are measured as the bytes the server writes).
func newTransport(ca *x509.CertPool, conns int) *http.Transport {
	return &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: ca},
		ForceAttemptHTTP2:   false,
		TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{},
		MaxIdleConnsPerHost: conns,
		MaxIdleConns:        conns * 4,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
}

// newEndpoint returns an endpoint whose requests fail after timeout (-timeout:
// a 70 MB list_all of 100,000 objects to 32 clients at once takes tens of
// seconds on 2 cores).
func newEndpoint(name, url, token string, ca *x509.CertPool, conns int, timeout time.Duration) *endpoint {
	tr := newTransport(ca, conns)
	return &endpoint{name: name, url: url, token: token, tr: tr, hc: &http.Client{Transport: tr}, timeout: timeout}
}

// call is one HTTP request.
type call struct {
	method, path string
	accept       string // default application/json
	contentType  string // of body
	body         []byte
	want         int // expected status; 0 means 200
}

func (e *endpoint) newRequest(ctx context.Context, c call) (*http.Request, error) {
	var body io.Reader
	if c.body != nil {
		body = bytes.NewReader(c.body)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, e.url+c.path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+e.token)
	accept := c.accept
	if accept == "" {
		accept = "application/json"
	}
	req.Header.Set("Accept", accept)
	if c.body != nil {
		ct := c.contentType
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	return req, nil
}

// do sends c and reads the whole response into buf (when not nil; else
// the body is read and dropped). A status other than c.want is an error
// that quotes the start of the body.
func (e *endpoint) do(ctx context.Context, c call, buf *bytes.Buffer) error {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	req, err := e.newRequest(ctx, c)
	if err != nil {
		return err
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s%s: %w", c.method, e.name, c.path, err)
	}
	defer resp.Body.Close()
	want := c.want
	if want == 0 {
		want = http.StatusOK
	}
	if resp.StatusCode != want {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return &statusError{code: resp.StatusCode, msg: fmt.Sprintf("%s %s%s: %s (want %d): %s", c.method, e.name, c.path,
			resp.Status, want, strings.TrimSpace(string(b)))}
	}
	if resp.ProtoMajor != 1 {
		return fmt.Errorf("%s %s%s: answered over %s, want HTTP/1.1", c.method, e.name, c.path, resp.Proto)
	}
	if buf == nil {
		_, err = io.Copy(io.Discard, resp.Body)
	} else {
		buf.Reset()
		_, err = buf.ReadFrom(resp.Body)
	}
	if err != nil {
		return fmt.Errorf("%s %s%s: reading the body: %w", c.method, e.name, c.path, err)
	}
	return nil
}

// statusError is an answer with an unexpected status.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

// bodyShape is what a timed list op checks without parsing the body:
// its length and its last byte other than white space (a list or a Table
// is one JSON object, so '}').
type bodyShape struct {
	n    int64
	last byte
}

// Write implements io.Writer for io.CopyBuffer.
func (s *bodyShape) Write(p []byte) (int, error) {
	s.n += int64(len(p))
	if t := bytes.TrimRight(p, " \t\r\n"); len(t) > 0 {
		s.last = t[len(t)-1]
	}
	return len(p), nil
}

// stream sends c and streams the body through scratch into a bodyShape,
// for large responses that need not be kept.
func (e *endpoint) stream(ctx context.Context, c call, scratch []byte) (bodyShape, error) {
	var shape bodyShape
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	req, err := e.newRequest(ctx, c)
	if err != nil {
		return shape, err
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		return shape, fmt.Errorf("%s %s%s: %w", c.method, e.name, c.path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return shape, fmt.Errorf("%s %s%s: %s: %s", c.method, e.name, c.path, resp.Status, strings.TrimSpace(string(b)))
	}
	if _, err := io.CopyBuffer(&shape, struct{ io.Reader }{resp.Body}, scratch); err != nil {
		return shape, fmt.Errorf("%s %s%s: reading the body: %w", c.method, e.name, c.path, err)
	}
	return shape, nil
}
