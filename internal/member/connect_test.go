package member_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/net/websocket"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// fakeKubelet is a real HTTPS server on the kubelet's paths, with a
// self-signed serving certificate (the kubelet's default): it records
// who called it and with what, answers logs, switches protocols for exec,
// attach and port-forward and echoes.
type fakeKubelet struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string // "CN O URI", and "auth" when credentials were relayed
	// following counts the log requests with follow=true still open.
	following atomic.Int32
}

func startFakeKubelet(t *testing.T) *fakeKubelet {
	k := &fakeKubelet{}
	k.srv = httptest.NewUnstartedServer(http.HandlerFunc(k.serve))
	k.srv.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
	k.srv.StartTLS() // httptest's own certificate: not the cluster CA's
	t.Cleanup(k.srv.Close)
	return k
}

func (k *fakeKubelet) serve(w http.ResponseWriter, r *http.Request) {
	c := r.TLS.PeerCertificates[0]
	rec := c.Subject.CommonName + " " + strings.Join(c.Subject.Organization, ",") + " " + r.URL.RequestURI()
	if r.Header.Get("Authorization") != "" {
		rec += " auth"
	}
	k.mu.Lock()
	k.seen = append(k.seen, rec)
	k.mu.Unlock()
	switch {
	case r.URL.Path == "/healthz":
		io.WriteString(w, "ok")
	case strings.HasPrefix(r.URL.Path, "/containerLogs/"):
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "line 1\n")
		if r.URL.Query().Get("follow") == "true" {
			k.following.Add(1)
			defer k.following.Add(-1)
			http.NewResponseController(w).Flush()
			<-r.Context().Done()
		}
	default: // exec, attach, portForward
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + r.Header.Get("Upgrade") +
			"\r\nSec-WebSocket-Protocol: " + r.Header.Get("Sec-WebSocket-Protocol") + "\r\n\r\n")
		brw.Flush()
		io.Copy(conn, brw)
	}
}

func (k *fakeKubelet) last() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.seen) == 0 {
		return ""
	}
	return k.seen[len(k.seen)-1]
}

// TestConnectThroughFollower serves pods/log, exec (SPDY and WebSocket),
// attach, portforward and nodes/proxy through a follower to a kubelet,
// and services/proxy to an endpoint.
func TestConnectThroughFollower(t *testing.T) {
	c := membertest.StartCluster(t, 3)
	f := c.Follower()
	cs := c.Clientset(f)
	ctx := t.Context()
	k := startFakeKubelet(t)
	host, port, _ := net.SplitHostPort(k.srv.Listener.Addr().String())

	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	status := `{"status":{"addresses":[{"type":"Hostname","address":"n1.invalid"},{"type":"InternalIP","address":"` + host +
		`"}],"daemonEndpoints":{"kubeletEndpoint":{"Port":` + port + `}}}}`
	if _, err := cs.CoreV1().Nodes().Patch(ctx, "n1", types.MergePatchType, []byte(status), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	pod := func(name string, containers ...string) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{NodeName: "n1"}}
		for _, c := range containers {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c, Image: "busybox"})
		}
		if _, err := cs.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod("one", "c")
	pod("two", "a", "b")
	// No wait for the follower to apply them: its reads are consistent.

	t.Run("log", func(t *testing.T) {
		tail := int64(10)
		b, err := cs.CoreV1().Pods("default").GetLogs("one", &corev1.PodLogOptions{TailLines: &tail, Timestamps: true}).DoRaw(ctx)
		if err != nil || string(b) != "line 1\n" {
			t.Fatalf("log: %q, %v", b, err)
		}
		if got, want := k.last(), "kube-apiserver-kubelet-client system:masters /containerLogs/default/one/c?tailLines=10&timestamps=true"; got != want {
			t.Fatalf("kubelet saw %q, want %q", got, want)
		}
		// (Stream, as kubectl logs: DoRaw does not decode error Statuses)
		_, err = cs.CoreV1().Pods("default").GetLogs("two", &corev1.PodLogOptions{}).Stream(ctx)
		if !apierrors.IsBadRequest(err) || err.Error() != "a container name must be specified for pod two, choose one of: [a b]" {
			t.Fatalf("two containers, none named: %v", err)
		}
		_, err = cs.CoreV1().Pods("default").GetLogs("two", &corev1.PodLogOptions{Container: "z"}).Stream(ctx)
		if !apierrors.IsBadRequest(err) || err.Error() != "container z is not valid for pod two" {
			t.Fatalf("unknown container: %v", err)
		}
		neg := int64(-1)
		_, err = cs.CoreV1().Pods("default").GetLogs("one", &corev1.PodLogOptions{TailLines: &neg}).Stream(ctx)
		if !apierrors.IsInvalid(err) {
			t.Fatalf("tailLines=-1: %v", err)
		}
		// follow streams: the first line arrives while the log goes on.
		fctx, cancel := context.WithCancel(ctx)
		defer cancel()
		rc, err := cs.CoreV1().Pods("default").GetLogs("two", &corev1.PodLogOptions{Container: "b", Follow: true}).Stream(fctx)
		if err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(rc).ReadString('\n')
		cancel()
		rc.Close()
		if err != nil || line != "line 1\n" {
			t.Fatalf("follow: %q, %v", line, err)
		}
	})

	// pods/log over WebSocket, as e2e's "logs … over websockets" reads it:
	// an empty message, then the log, then the end; base64 under
	// base64.binary.k8s.io; a follow ends at the kubelet when the client
	// closes; an unknown subprotocol is 400 before any upgrade.
	t.Run("log over WebSocket", func(t *testing.T) {
		dial := func(t *testing.T, path string, protocols ...string) (*websocket.Conn, error) {
			cfg, err := websocket.NewConfig("wss://"+strings.TrimPrefix(c.URL(f), "https://")+path, "http://localhost")
			if err != nil {
				t.Fatal(err)
			}
			cfg.Header = http.Header{"Authorization": {"Bearer " + c.RESTConfig(f).BearerToken}}
			cfg.Protocol = protocols
			return websocket.NewClient(cfg, dialMember(t, c.RESTConfig(f)))
		}
		messages := func(t *testing.T, ws *websocket.Conn, text bool) []string {
			var msgs []string
			for {
				var m string
				var b []byte
				var err error
				if text {
					err = websocket.Message.Receive(ws, &m)
				} else if err = websocket.Message.Receive(ws, &b); err == nil {
					m = string(b)
				}
				if err == io.EOF {
					return msgs
				}
				if err != nil {
					t.Fatalf("after %q: %v", msgs, err)
				}
				msgs = append(msgs, m)
			}
		}
		for _, proto := range []string{"binary.k8s.io", "base64.binary.k8s.io"} {
			ws, err := dial(t, "/api/v1/namespaces/default/pods/one/log?container=c&tailLines=5", proto)
			if err != nil {
				t.Fatalf("%s: %v", proto, err)
			}
			if got := ws.Config().Protocol; len(got) != 1 || got[0] != proto {
				t.Fatalf("negotiated %q, want %s", got, proto)
			}
			msgs := messages(t, ws, proto != "binary.k8s.io")
			ws.Close()
			if len(msgs) != 2 || msgs[0] != "" {
				t.Fatalf("%s: messages %q, want the empty one and the log", proto, msgs)
			}
			log := msgs[1]
			if proto == "base64.binary.k8s.io" {
				b, err := base64.StdEncoding.DecodeString(log)
				if err != nil {
					t.Fatalf("%s: %q: %v", proto, log, err)
				}
				log = string(b)
			}
			if log != "line 1\n" {
				t.Fatalf("%s: log %q", proto, log)
			}
			if got, want := k.last(), "kube-apiserver-kubelet-client system:masters /containerLogs/default/one/c?tailLines=5"; got != want {
				t.Fatalf("kubelet saw %q, want %q", got, want)
			}
		}

		ws, err := dial(t, "/api/v1/namespaces/default/pods/one/log?follow=true", "binary.k8s.io")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"", "line 1\n"} {
			var b []byte
			if err := websocket.Message.Receive(ws, &b); err != nil || string(b) != want {
				t.Fatalf("follow: %q, %v; want %q", b, err, want)
			}
		}
		if k.following.Load() != 1 {
			t.Fatalf("%d follows open at the kubelet, want 1", k.following.Load())
		}
		ws.Close()
		membertest.Eventually(t, 10e9, func() error {
			if n := k.following.Load(); n != 0 {
				return fmt.Errorf("%d follows still open at the kubelet after the client closed", n)
			}
			return nil
		})

		_, err = dial(t, "/api/v1/namespaces/default/pods/one/log", "v4.channel.k8s.io")
		if err == nil || !strings.Contains(err.Error(), "bad status") {
			t.Fatalf("unsupported subprotocol: %v, want a refused upgrade", err)
		}
	})

	t.Run("nodes/proxy", func(t *testing.T) {
		b, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes/n1/proxy/healthz").Param("verbose", "1").DoRaw(ctx)
		if err != nil || string(b) != "ok" {
			t.Fatalf("%q, %v", b, err)
		}
		if got, want := k.last(), "kube-apiserver-kubelet-client system:masters /healthz?verbose=1"; got != want {
			t.Fatalf("kubelet saw %q, want %q", got, want)
		}
		// The kubelet's own port named: the kubelet, with its client certificate.
		b, err = cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes/n1:" + port + "/proxy/healthz").DoRaw(ctx)
		if err != nil || string(b) != "ok" || k.last() != "kube-apiserver-kubelet-client system:masters /healthz" {
			t.Fatalf("n1:%s: %q, %v, kubelet saw %q", port, b, err, k.last())
		}
	})

	for _, tc := range []struct{ method, path, upgrade, proto, want string }{
		{"POST", "/api/v1/namespaces/default/pods/one/exec?command=sh&command=-c&command=echo+hi&stdout=true&stderr=true",
			"SPDY/3.1", "", "/exec/default/one/c?command=sh&command=-c&command=echo+hi&error=1&output=1"},
		{"GET", "/api/v1/namespaces/default/pods/two/exec?container=a&command=ls&stdin=true&tty=true",
			"websocket", "v5.channel.k8s.io", "/exec/default/two/a?command=ls&input=1&tty=1"},
		{"POST", "/api/v1/namespaces/default/pods/one/attach?stdout=1", "SPDY/3.1", "", "/attach/default/one/c?output=1"},
		{"GET", "/api/v1/namespaces/default/pods/one/portforward?ports=8080", "websocket", "v2.portforward.k8s.io",
			"/portForward/default/one?port=8080"},
	} {
		t.Run(tc.upgrade+" "+tc.path, func(t *testing.T) {
			conn := dialMember(t, c.RESTConfig(f))
			req, _ := http.NewRequest(tc.method, c.URL(f)+tc.path, nil)
			req.Header.Set("Authorization", "Bearer "+c.RESTConfig(f).BearerToken)
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", tc.upgrade)
			if tc.proto != "" {
				req.Header.Set("Sec-WebSocket-Protocol", tc.proto)
			}
			if err := req.Write(conn); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Protocol") != tc.proto {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("%s %v %s", resp.Status, resp.Header, b)
			}
			io.WriteString(conn, "ping")
			buf := make([]byte, 4)
			if _, err := io.ReadFull(br, buf); err != nil || string(buf) != "ping" {
				t.Fatalf("echo %q, %v", buf, err)
			}
			if got, want := k.last(), "kube-apiserver-kubelet-client system:masters "+tc.want; got != want {
				t.Fatalf("kubelet saw %q, want %q", got, want)
			}
		})
	}

	// A WebSocket exec is a GET: it needs create on pods/exec as well (kube
	// 1.35+), so get alone is 403; create and get, 101.
	t.Run("exec needs create", func(t *testing.T) {
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "exec"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"get"}}}}
		if _, err := cs.RbacV1().Roles("default").Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "exec"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "exec"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bob"}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		wsExec := func() int {
			conn := dialMember(t, c.RESTConfig(f))
			req, _ := http.NewRequest(http.MethodGet, c.URL(f)+"/api/v1/namespaces/default/pods/one/exec?command=ls&stdout=1", nil)
			req.Header.Set("Authorization", "Bearer "+c.RESTConfig(f).BearerToken)
			req.Header.Set("Impersonate-User", "bob")
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", "websocket")
			if err := req.Write(conn); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), req)
			if err != nil {
				t.Fatal(err)
			}
			return resp.StatusCode
		}
		membertest.Eventually(t, 10e9, func() error {
			if code := wsExec(); code != http.StatusForbidden {
				return fmt.Errorf("get only: %d, want 403", code)
			}
			return nil
		})
		role.Rules[0].Verbs = []string{"create", "get"}
		if _, err := cs.RbacV1().Roles("default").Update(ctx, role, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		membertest.Eventually(t, 10e9, func() error {
			if code := wsExec(); code != http.StatusSwitchingProtocols {
				return fmt.Errorf("create and get: %d, want 101", code)
			}
			return nil
		})
	})

	t.Run("services/proxy", func(t *testing.T) {
		var got string
		backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got = r.Method + " " + r.URL.RequestURI()
			io.WriteString(w, "backend")
		}))
		defer backend.Close()
		bu, _ := url.Parse(backend.URL)
		bport, _ := strconv.Atoi(bu.Port())
		if _, err := cs.CoreV1().Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pname, pport := "http", int32(bport)
		if _, err := cs.DiscoveryV1().EndpointSlices("default").Create(ctx, &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Name: "web-1", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"},
				TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "one"}}},
			Ports: []discoveryv1.EndpointPort{{Name: &pname, Port: &pport}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		membertest.Eventually(t, 10e9, func() error {
			b, err := cs.CoreV1().RESTClient().Post().AbsPath("/api/v1/namespaces/default/services/web:80/proxy/a/b/").
				Param("x", "1").Body([]byte("{}")).DoRaw(ctx)
			if err != nil {
				return err
			}
			if string(b) != "backend" || got != "POST /a/b/?x=1" {
				t.Fatalf("backend answered %q and saw %q", b, got)
			}
			return nil
		})
		noRetry, err := kubernetes.NewForConfig(c.RESTConfig(f)) // the 503 as it is
		if err != nil {
			t.Fatal(err)
		}
		err = noRetry.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/default/services/web:81/proxy/").Do(ctx).Error()
		if !apierrors.IsServiceUnavailable(err) {
			t.Fatalf("unknown service port: %v", err)
		}
		err = cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/default/pods/one/proxy/").Do(ctx).Error()
		if !apierrors.IsBadRequest(err) || err.Error() != "address not allowed" {
			t.Fatalf("pod without an IP: %v", err)
		}
	})
}

// dialMember opens a TLS connection to cfg's member, trusting its CA.
func dialMember(t *testing.T, cfg *rest.Config) net.Conn {
	t.Helper()
	tr := cfg.Transport.(*http.Transport)
	u, _ := url.Parse(cfg.Host)
	tc := tr.TLSClientConfig.Clone()
	tc.NextProtos = []string{"http/1.1"}
	conn, err := tls.Dial("tcp", u.Host, tc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}
