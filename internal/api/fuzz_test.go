package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/litek8s/litek8s/internal/api"
)

var patchTypes = []string{
	"application/json-patch+json",
	"application/merge-patch+json",
	"application/strategic-merge-patch+json",
	"application/apply-patch+yaml",
}

// serve sends one request to srv as the admin.
func serve(srv *api.Server, method, target, ctype string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer t")
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	return rec
}

// checkAnswer: a JSON answer; an error is a Status with the same code.
// Some 500s are kube-apiserver 1.37's own answers to bad patches (an apply
// with a field its schema does not declare, kubernetes/kubernetes#139253;
// an unknown strategic-merge directive), so the targets check the answer's
// shape, that nothing panics, and that a refused write changes nothing.
func checkAnswer(t *testing.T, what string, rec *httptest.ResponseRecorder) {
	t.Helper()
	var st struct {
		Kind string `json:"kind"`
		Code int    `json:"code"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
		t.Fatalf("%s: %d, not JSON: %q", what, rec.Code, rec.Body)
	}
	if rec.Code >= 400 && (st.Kind != "Status" || st.Code != rec.Code) {
		t.Fatalf("%s: %d without a matching Status: %s", what, rec.Code, rec.Body)
	}
}

// FuzzPatch: a PATCH of any body with each patch type answers an object
// or a Status (never a panic), and a refused patch changes nothing.
//
//	go test -run xxx -fuzz FuzzPatch -fuzztime 30s ./internal/api/
func FuzzPatch(f *testing.F) {
	for _, s := range []struct {
		body string
		typ  uint8
	}{
		{`[{"op":"add","path":"/data/x","value":"y"}]`, 0},
		{`[{"op":"replace","path":"/metadata/name","value":"other"}]`, 0},
		{`[{"op":"test","path":"/data/key","value":"nope"}]`, 0},
		{`[{"op":"move","from":"/data","path":"/data/x"}]`, 0},
		{`{"data":{"key":null,"n":"1"}}`, 1},
		{`{"metadata":{"resourceVersion":"1"}}`, 1},
		{`{"data":{"$patch":"replace","a":"b"}}`, 2},
		{`{"metadata":{"$deleteFromPrimitiveList/finalizers":["x"]}}`, 2},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-000001\ndata:\n  a: b\n", 3},
		{"apiVersion: v1\nkind: Secret\nmetadata:\n  name: cm-000001\n", 3},
		{`{"data":`, 1}, {`null`, 1}, {`[]`, 2}, {"\x00\xff", 0},
	} {
		f.Add([]byte(s.body), s.typ)
	}
	srv := benchServer(f, 2)
	const target = "/api/v1/namespaces/bench/configmaps/cm-000001"
	f.Fuzz(func(t *testing.T, body []byte, typ uint8) {
		before := serve(srv, http.MethodGet, target, "", nil).Body.String()
		ctype := patchTypes[int(typ)%len(patchTypes)]
		q := target
		if strings.HasPrefix(ctype, "application/apply") {
			q += "?fieldManager=fuzz&force=true"
		}
		rec := serve(srv, http.MethodPatch, q, ctype, body)
		checkAnswer(t, ctype+" "+string(body), rec)
		if rec.Code >= 400 {
			if after := serve(srv, http.MethodGet, target, "", nil).Body.String(); after != before {
				t.Fatalf("a refused %s patch (%d) changed the object:\n%s\n%s", ctype, rec.Code, before, after)
			}
		}
	})
}

// FuzzRequest: any path, query and selector is routed to an answer (an
// object, a list or a Status): never a panic, no 5xx but kube's own.
//
//	go test -run xxx -fuzz FuzzRequest -fuzztime 30s ./internal/api/
func FuzzRequest(f *testing.F) {
	for _, s := range []string{
		"/api/v1/namespaces/bench/configmaps",
		"/api/v1/namespaces/bench/configmaps?labelSelector=app%3Dbench,shard+in+(s1,s2)",
		"/api/v1/configmaps?fieldSelector=metadata.name%21%3Dx,metadata.namespace%3Dbench",
		"/api/v1/namespaces/bench/configmaps?labelSelector=%21%21%21",
		"/api/v1/namespaces/bench/configmaps?limit=1&continue=garbage",
		"/api/v1/namespaces/bench/configmaps/cm-000000/status",
		"/apis/apps/v1/namespaces/bench/deployments/x/scale",
		"/apis/unknown.group/v1/things",
		"/api/v1/namespaces/../configmaps",
		"/api/v1/namespaces//configmaps//",
		"/api/v1/namespaces/bench/configmaps?resourceVersion=abc&resourceVersionMatch=Exact",
		"/api/v1/namespaces/bench/configmaps?watch=1&timeoutSeconds=0&resourceVersion=1",
	} {
		f.Add(s)
	}
	srv := benchServer(f, 2)
	f.Fuzz(func(t *testing.T, target string) {
		u, err := url.Parse(target)
		if err != nil || u.Host != "" || u.Scheme != "" ||
			!(strings.HasPrefix(u.Path, "/api/v1/") || strings.HasPrefix(u.Path, "/apis/") && strings.Count(u.Path, "/") >= 4) {
			return // not a resource request a client can send (other paths are plain net/http 404s, as in kube)
		}
		if u.Query().Has("watch") || strings.Contains(u.Path, "/watch/") {
			return // watches are long-running: FuzzRequest checks the quick answers
		}
		req, err := http.NewRequest(http.MethodGet, target, nil)
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer t")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code >= 300 && rec.Code < 400 {
			return // net/http's ServeMux redirects unclean paths (/a/../b)
		}
		checkAnswer(t, "GET "+target, rec)
		// the 5xx kube answers too: a resourceVersion ahead of the store
		// (504 after waiting for it, as kube-apiserver)
		if rec.Code >= 500 && !strings.Contains(rec.Body.String(), "Too large resource version") {
			t.Fatalf("GET %s: %d %s", target, rec.Code, rec.Body)
		}
	})
}
