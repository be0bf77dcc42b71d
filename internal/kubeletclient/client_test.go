package kubeletclient

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testCA issues certificates for the tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return &testCA{cert: c, key: key}
}

// issue signs a leaf for cn with the given IP SANs; a nil ca self-signs.
func (ca *testCA) issue(t *testing.T, cn string, ips ...net.IP) tls.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: ips,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	parent, signer := tmpl, any(key)
	if ca != nil {
		parent, signer = ca.cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func newTestClient(t *testing.T, ca *testCA) *Client {
	t.Helper()
	cfg := DefaultConfig()
	cfg.ClientCert, cfg.ClusterCA = ca.issue(t, "kube-apiserver-kubelet-client"), ca.cert
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// kubeletServer is an HTTPS server with serving certificate cert that
// requires a client certificate and answers with its common name.
func kubeletServer(t *testing.T, cert tls.Certificate, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAnyClientCert}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func whoami(w http.ResponseWriter, r *http.Request) {
	io.WriteString(w, r.TLS.PeerCertificates[0].Subject.CommonName+" "+r.URL.RequestURI())
}

func TestKubeletTransportVerification(t *testing.T) {
	ca := newTestCA(t)
	c := newTestClient(t, ca)
	loopback := net.ParseIP("127.0.0.1")
	for _, tc := range []struct {
		name     string
		cert     tls.Certificate
		insecure bool
		ok       bool
	}{
		{"signed by the cluster CA for the address", ca.issue(t, "node", loopback), false, true},
		{"signed by the cluster CA for another address", ca.issue(t, "node", net.ParseIP("10.9.9.9")), false, false},
		{"signed by the cluster CA for another address, insecure", ca.issue(t, "node", net.ParseIP("10.9.9.9")), true, true},
		{"self-signed (the kubelet's default)", (*testCA)(nil).issue(t, "node", loopback), false, true},
		{"signed by another CA", newTestCA(t).issue(t, "node", net.ParseIP("10.9.9.9")), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := kubeletServer(t, tc.cert, http.HandlerFunc(whoami))
			resp, err := (&http.Client{Transport: c.KubeletTransport(tc.insecure)}).Get(srv.URL + "/healthz")
			if !tc.ok {
				if err == nil {
					resp.Body.Close()
					t.Fatal("connected to a kubelet whose certificate names another address")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if got := string(b); got != "kube-apiserver-kubelet-client /healthz" {
				t.Fatalf("kubelet saw %q", got)
			}
		})
	}
}

func TestNodeURL(t *testing.T) {
	c := newTestClient(t, newTestCA(t))
	node := func(port int32, addrs ...corev1.NodeAddress) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
		n.Status.Addresses, n.Status.DaemonEndpoints.KubeletEndpoint.Port = addrs, port
		return n
	}
	host := corev1.NodeAddress{Type: corev1.NodeHostName, Address: "n1.example"}
	internal := corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.0.0.5"}
	v6 := corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "fd00::5"}
	for _, tc := range []struct {
		node *corev1.Node
		want string
	}{
		{node(10255, host, internal), "https://10.0.0.5:10255"},
		{node(0, host), "https://n1.example:10250"},
		{node(0, v6), "https://[fd00::5]:10250"},
		{node(0), ""},
	} {
		u, err := c.NodeURL(tc.node)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("%v: got %s, want an error", tc.node.Status.Addresses, u)
		case tc.want != "" && (err != nil || u.String() != tc.want):
			t.Errorf("%v: got %v, %v, want %s", tc.node.Status.Addresses, u, err, tc.want)
		}
	}
}

func TestPaths(t *testing.T) {
	i := func(v int64) *int64 { return &v }
	since := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	stream := "Stdout"
	for _, tc := range []struct{ got, want string }{
		{LogPath("ns", "p", "c", &corev1.PodLogOptions{}).String(), "/containerLogs/ns/p/c"},
		{LogPath("ns", "p", "c", &corev1.PodLogOptions{Follow: true, Previous: true, Timestamps: true,
			SinceSeconds: i(5), TailLines: i(10), LimitBytes: i(100), Stream: &stream}).String(),
			"/containerLogs/ns/p/c?follow=true&limitBytes=100&previous=true&sinceSeconds=5&stream=Stdout&tailLines=10&timestamps=true"},
		{LogPath("ns", "p", "c", &corev1.PodLogOptions{SinceTime: &since}).String(),
			"/containerLogs/ns/p/c?sinceTime=2026-01-02T03%3A04%3A05Z"},
		{ExecPath("ns", "p", "c", &corev1.PodExecOptions{Stdin: true, Stdout: true, TTY: true,
			Command: []string{"sh", "-c", "echo a b"}}).String(),
			"/exec/ns/p/c?command=sh&command=-c&command=echo+a+b&input=1&output=1&tty=1"},
		{AttachPath("ns", "p", "c", &corev1.PodAttachOptions{Stderr: true}).String(), "/attach/ns/p/c?error=1"},
		{PortForwardPath("ns", "p", &corev1.PodPortForwardOptions{Ports: []int32{80, 443}}).String(),
			"/portForward/ns/p?port=80%2C443"},
		{At(&url.URL{Scheme: "https", Host: "h:1"}, PortForwardPath("ns", "p", &corev1.PodPortForwardOptions{})).String(),
			"https://h:1/portForward/ns/p"},
	} {
		if tc.got != tc.want {
			t.Errorf("got  %s\nwant %s", tc.got, tc.want)
		}
	}
}

// TestProxyUpgrade relays an upgrade (as SPDY/3.1 and WebSocket do) to a
// real HTTPS server that switches protocols and echoes, and a streamed
// answer that is flushed line by line; the client's credentials are not
// relayed.
func TestProxyUpgrade(t *testing.T) {
	ca := newTestCA(t)
	c := newTestClient(t, ca)
	backend := kubeletServer(t, (*testCA)(nil).issue(t, "node"), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			http.Error(w, "credentials relayed", http.StatusBadRequest)
			return
		}
		if r.URL.Path == "/containerLogs/ns/p/c" {
			for i := range 2 {
				io.WriteString(w, strings.Repeat("x", i+1)+"\n")
				http.NewResponseController(w).Flush()
				<-r.Context().Done() // the client goes away after the first line
			}
			return
		}
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " +
			r.Header.Get("Upgrade") + "\r\nX-Stream-Protocol-Version: " + r.Header.Get("X-Stream-Protocol-Version") + "\r\n\r\n")
		brw.Flush()
		io.Copy(conn, brw) // echo until the client closes
	}))
	target, _ := url.Parse(backend.URL)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Proxy(w, r, At(target, r.URL), c.KubeletTransport(false), func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, err.Error(), http.StatusBadGateway)
		})
	}))
	defer front.Close()

	for _, proto := range []string{"SPDY/3.1", "websocket"} {
		conn, err := net.Dial("tcp", front.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(conn, "GET /exec/ns/p/c?command=sh HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret\r\n"+
			"Connection: Upgrade\r\nUpgrade: "+proto+"\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n")
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Upgrade") != proto ||
			resp.Header.Get("X-Stream-Protocol-Version") != "v4.channel.k8s.io" {
			t.Fatalf("%s: %s %v", proto, resp.Status, resp.Header)
		}
		io.WriteString(conn, "ping")
		buf := make([]byte, 4)
		if _, err := io.ReadFull(br, buf); err != nil || string(buf) != "ping" {
			t.Fatalf("%s: echoed %q, %v", proto, buf, err)
		}
		conn.Close()
	}

	// A streamed answer arrives before it ends.
	resp, err := http.Get(front.URL + "/containerLogs/ns/p/c")
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	resp.Body.Close()
	if err != nil || line != "x\n" {
		t.Fatalf("first line %q, %v", line, err)
	}

	// An unreachable backend is onError's.
	dead := &url.URL{Scheme: "https", Host: "127.0.0.1:1"}
	rec := httptest.NewRecorder()
	Proxy(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil), dead, c.KubeletTransport(false),
		func(w http.ResponseWriter, _ *http.Request, err error) { w.WriteHeader(http.StatusServiceUnavailable) })
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("unreachable backend: %d", rec.Code)
	}
}
