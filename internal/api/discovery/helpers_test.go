package discovery

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// goldenAddress is the address kube-apiserver announced in the captures.
const goldenAddress = "127.0.0.1:16443"

// testResources is what litek8s serves today, as its resource table
// describes it.
func testResources() []Resource {
	crud := []string{"watch", "list", "get", "create", "update", "patch", "delete", "deletecollection"}
	status := []string{"update", "get", "patch"}
	return []Resource{
		{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Singular: "lease", Kind: "Lease",
			Namespaced: true, Verbs: crud},
		{Version: "v1", Resource: "pods", Singular: "pod", Kind: "Pod", Namespaced: true,
			ShortNames: []string{"po"}, Categories: []string{"all"}, Verbs: crud,
			Subresources: []Subresource{{Name: "status", Kind: "Pod", Verbs: status}}},
		{Version: "v1", Resource: "configmaps", Singular: "configmap", Kind: "ConfigMap", Namespaced: true,
			ShortNames: []string{"cm"}, Verbs: crud},
		{Version: "v1", Resource: "namespaces", Singular: "namespace", Kind: "Namespace",
			ShortNames: []string{"ns"}, Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}},
		{Group: "apps", Version: "v1", Resource: "deployments", Singular: "deployment", Kind: "Deployment",
			Namespaced: true, ShortNames: []string{"deploy"}, Categories: []string{"all"}, Verbs: crud,
			Subresources: []Subresource{
				{Name: "status", Verbs: status},
				{Name: "scale", Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: status},
			}},
	}
}

// newTestServer serves a Handler for testResources with cfg.
func newTestServer(t *testing.T, cfg Config) *httptest.Server {
	t.Helper()
	h, err := New(cfg, testResources())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// goldenConfig announces the address kube-apiserver announced.
func goldenConfig() Config {
	return Config{ServerAddress: goldenAddress, Logger: slog.New(slog.DiscardHandler)}
}

// golden is one capture: the body and its .meta.
type golden struct {
	body       []byte
	method     string
	target     string
	reqHeader  http.Header
	status     int
	respHeader http.Header
}

// readGolden reads testdata/kube-1.37/<name>.<ext> and its .meta.
func readGolden(t *testing.T, name, ext string) golden {
	t.Helper()
	base := filepath.Join("testdata", "kube-1.37", name)
	body, err := os.ReadFile(base + "." + ext)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := os.ReadFile(base + ".meta")
	if err != nil {
		t.Fatal(err)
	}
	g := golden{body: body}
	req, resp, _ := strings.Cut(string(meta), "# response\n")
	req = strings.TrimPrefix(req, "# request\n")
	var line string
	line, g.reqHeader = readHead(t, req)
	fields := strings.Fields(line)
	g.method, g.target = fields[0], fields[1]
	line, g.respHeader = readHead(t, resp)
	if g.status, err = strconv.Atoi(strings.Fields(line)[1]); err != nil {
		t.Fatalf("%s.meta: status line %q: %v", name, line, err)
	}
	return g
}

// readHead parses a start line and MIME headers.
func readHead(t *testing.T, s string) (string, http.Header) {
	t.Helper()
	r := textproto.NewReader(bufio.NewReader(strings.NewReader(strings.TrimLeft(s, "\n") + "\n")))
	line, err := r.ReadLine()
	if err != nil {
		t.Fatal(err)
	}
	h, err := r.ReadMIMEHeader()
	if err != nil && err != io.EOF {
		t.Fatalf("headers after %q: %v", line, err)
	}
	return line, http.Header(h)
}

// do sends g's request (method, path, Accept, User-Agent, If-None-Match) to
// srv and returns the response and its body.
func (g golden) do(t *testing.T, srv *httptest.Server) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), g.method, srv.URL+g.target, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"Accept", "User-Agent", "If-None-Match"} {
		if v := g.reqHeader.Get(k); v != "" {
			req.Header.Set(k, v)
		}
	}
	return send(t, req)
}

func send(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// get sends GET path with the given Accept (none if empty).
func get(t *testing.T, srv *httptest.Server, path, accept string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	req.Header.Set("User-Agent", "golden-curl/1.0")
	return send(t, req)
}

// kubeOnlyHeader reports headers sent by kube-apiserver but not by this
// package (audit, priority and fairness) or that differ by nature (Date,
// Etag values, framing, which depends on the body size).
func kubeOnlyHeader(k string) bool {
	switch k {
	case "Audit-Id", "X-Kubernetes-Pf-Flowschema-Uid", "X-Kubernetes-Pf-Prioritylevel-Uid",
		"Date", "Etag", "Content-Length", "Transfer-Encoding":
		return true
	}
	return false
}

// checkHeaders compares the response headers with the golden ones, except
// kubeOnlyHeader; Etag must be present in both or neither.
func checkHeaders(t *testing.T, g golden, resp *http.Response) {
	t.Helper()
	if resp.StatusCode != g.status {
		t.Errorf("status = %d, golden %d", resp.StatusCode, g.status)
	}
	names := map[string]bool{}
	for k := range g.respHeader {
		names[k] = true
	}
	for k := range resp.Header {
		names[k] = true
	}
	for k := range names {
		if kubeOnlyHeader(k) {
			continue
		}
		if got, want := resp.Header.Values(k), g.respHeader.Values(k); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("header %s = %q, golden %q", k, got, want)
		}
	}
	if (resp.Header.Get("Etag") == "") != (g.respHeader.Get("Etag") == "") {
		t.Errorf("Etag = %q, golden %q", resp.Header.Get("Etag"), g.respHeader.Get("Etag"))
	}
}

// checkFraming checks that a compact body ends with exactly one newline.
func checkFraming(t *testing.T, body []byte) {
	t.Helper()
	if !bytes.HasSuffix(body, []byte("}\n")) {
		t.Errorf("body does not end with exactly one newline: %q", tail(body))
	}
}

func tail(b []byte) []byte {
	return b[max(0, len(b)-20):]
}
