package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"log"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// staticServer is the baseline of target 3: a handler that only writes a
// precomputed copy of the cluster's own list responses, served like a
// member's API (TLS with a P-256 certificate, the same ALPN offer, HTTP/1.1
// keep-alive to our clients), so that list_all / static is the share of
// the machine's TLS + HTTP + client limit that the member reaches.
type staticServer struct {
	ep  *endpoint
	srv *http.Server
	wg  sync.WaitGroup
}

// startStatic serves list for any GET and sel when the query has a
// labelSelector.
func startStatic(list, sel []byte, token string, conns int, timeout time.Duration) (*staticServer, error) {
	cert, pool, err := selfSigned()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	listLen, selLen := strconv.Itoa(len(list)), strconv.Itoa(len(sel))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, n := list, listLen
		if strings.Contains(r.URL.RawQuery, "labelSelector=") {
			body, n = sel, selLen
		}
		hd := w.Header()
		hd.Set("Content-Type", "application/json")
		hd.Set("Content-Length", n)
		w.Write(body)
	})
	s := &staticServer{srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}},
		ErrorLog:  log.New(discard{}, "", 0)}}
	s.ep = newEndpoint("static", "https://"+ln.Addr().String(), token, pool, conns, timeout)
	tl := tls.NewListener(ln, s.srv.TLSConfig)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.srv.Serve(tl)
	}()
	return s, nil
}

// Close stops the server and waits for it.
func (s *staticServer) Close() error {
	s.ep.tr.CloseIdleConnections()
	err := s.srv.Close()
	s.wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// selfSigned returns a P-256 certificate for 127.0.0.1 (what members use)
// and a pool that trusts it.
func selfSigned() (tls.Certificate, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "api_load static"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool, nil
}
