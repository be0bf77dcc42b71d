package member_test

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/datadir"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// Issue 6, acceptance 5: Raft and the internal endpoints refuse a client
// without a member certificate of the cluster CA: plain TCP, TLS without a
// certificate, a certificate of another CA, and a certificate of the
// cluster CA that is not a member's. A member certificate gets through
// (so that the refusals are not an accident of the test).
func TestMemberTrafficNeedsClusterCertificate(t *testing.T) {
	c := membertest.StartCluster(t, 2, membertest.FastRaft) // two members replicate: Raft's TLS works
	sec, _, err := datadir.LoadSecrets(c.Config(0).DataDir)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := sec.CAPool()
	if err != nil {
		t.Fatal(err)
	}
	other, err := datadir.NewSecrets("", "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ips := member.CertIPs("127.0.0.1:1", nil)
	member, err := sec.MemberCert("prober", ips, nil)
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := other.MemberCert("prober", ips, nil)
	if err != nil {
		t.Fatal(err)
	}
	user := userCert(t, sec)
	raftAddr := c.Member(0).Store().RaftAddr()

	t.Run("raft, plain TCP", func(t *testing.T) {
		conn, err := net.DialTimeout("tcp", raftAddr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		// what NetworkTransport sends first: the RPC type (0: AppendEntries)
		// and a msgpack header
		conn.Write([]byte{0, 0x82, 0xa4, 'T', 'e', 'r', 'm', 1})
		got, err := io.ReadAll(conn)
		if err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
			t.Fatalf("read: %v", err)
		}
		if len(got) > 0 && got[0] != 0x15 { // anything but a TLS alert record
			t.Fatalf("a plain TCP client got %q", got)
		}
	})
	for _, tc := range []struct {
		name  string
		certs []tls.Certificate
		ok    bool
	}{
		{"no certificate", nil, false},
		{"another cluster's CA", []tls.Certificate{foreign}, false},
		{"the cluster CA, not a member", []tls.Certificate{user}, false},
		{"a member", []tls.Certificate{member}, true},
	} {
		t.Run("raft, "+tc.name, func(t *testing.T) {
			err := raftHandshake(raftAddr, pool, tc.certs)
			if tc.ok && err != nil {
				t.Fatalf("handshake: %v", err)
			}
			if !tc.ok && err == nil {
				t.Fatal("handshake succeeded")
			}
		})
		t.Run("internal endpoints, "+tc.name, func(t *testing.T) {
			cl := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
				TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: tc.certs}}}
			defer cl.CloseIdleConnections()
			for _, ep := range []struct{ method, path string }{
				{"GET", "/internal/v1/readindex"}, {"POST", "/internal/v1/join"},
			} {
				req, _ := http.NewRequestWithContext(t.Context(), ep.method, c.Member(0).URL()+ep.path, bytes.NewReader([]byte("{}")))
				req.Header.Set("Authorization", "Bearer "+c.Token()) // the admin token opens no internal door
				resp, err := cl.Do(req)
				if err != nil {
					if tc.ok || tc.name != "another cluster's CA" { // a certificate of an unknown CA fails the handshake
						t.Fatalf("%s %s: %v", ep.method, ep.path, err)
					}
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				refused := resp.StatusCode == http.StatusForbidden
				if refused == tc.ok {
					t.Errorf("%s %s: %s %s", ep.method, ep.path, resp.Status, body)
				}
			}
		})
	}
}

// raftHandshake completes a TLS handshake with the Raft listener at addr.
func raftHandshake(addr string, pool *x509.CertPool, certs []tls.Certificate) error {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr,
		&tls.Config{RootCAs: pool, Certificates: certs, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS13})
	if err != nil {
		return err
	}
	defer conn.Close()
	// TLS 1.3: the server checks the client's certificate after the
	// client's handshake ends; its refusal arrives as an alert on read.
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	_, err = conn.Read(make([]byte, 1))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return nil // accepted: the server waits for an RPC
	}
	return err
}

// userCert is a certificate of the cluster CA for someone who is not a
// member (what an administrator could issue to a user).
func userCert(t *testing.T, sec datadir.Secrets) tls.Certificate {
	t.Helper()
	cert, err := sec.MemberCert("alice", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// re-issue with another organization
	ca, err := tls.X509KeyPair(sec.CACert, sec.CAKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(ca.Certificate[0])
	tmpl := *cert.Leaf
	tmpl.Subject.Organization = []string{"developers"}
	tmpl.RawSubject = nil // else CreateCertificate keeps the parsed subject
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, caCert, cert.Leaf.PublicKey, ca.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: cert.PrivateKey}
}
