package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/litek8s/litek8s/internal/api"
	"github.com/litek8s/litek8s/internal/audit"
)

// auditServer is a real single-member API with an audit log of policy,
// with metrics (as members run it).
func auditServer(tb testing.TB, policy string) (*api.Server, string) {
	tb.Helper()
	dir := tb.TempDir()
	pf, lf := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "audit.log")
	if err := os.WriteFile(pf, []byte(policy), 0o600); err != nil {
		tb.Fatal(err)
	}
	l, err := audit.Open(audit.Config{PolicyFile: pf, Path: lf}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
	return newAPIServer(tb, func(c *api.Config) {
		c.Audit, c.Metrics = l, prometheus.NewRegistry()
	}, "audit", "bench"), lf
}

// readAudit returns the events of the log at path.
func readAudit(t *testing.T, path string) []auditv1.Event {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// An event being written may be visible in part: only whole lines
	// count.
	b = b[:bytes.LastIndexByte(b, '\n')+1]
	var evs []auditv1.Event
	for line := range bytes.Lines(b) {
		var ev auditv1.Event
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

const rrPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: RequestResponse
  resources: [{group: "", resources: [configmaps]}]
- level: Metadata
`

func TestAuditCreate(t *testing.T) {
	srv, lf := auditServer(t, rrPolicy)
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a1"},"data":{"k":"v"}}`
	req := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/audit/configmaps?fieldManager=kubectl-create&fieldValidation=Strict", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer t")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	var got *auditv1.Event
	for _, ev := range readAudit(t, lf) {
		if ev.Verb == "create" && ev.ObjectRef != nil && ev.ObjectRef.Resource == "configmaps" && ev.ObjectRef.Namespace == "audit" {
			got = &ev
		}
	}
	if got == nil {
		t.Fatal("no create event")
	}
	b, _ := json.Marshal(got)
	t.Logf("%s", b)
	if got.ObjectRef.Name != "a1" || got.RequestObject == nil || got.ResponseObject == nil {
		t.Errorf("event: %s", b)
	}
	if id := rec.Header().Get("Audit-Id"); id != string(got.AuditID) {
		t.Errorf("Audit-Id %q, event %q", id, got.AuditID)
	}
}

// TestAuditRelayHeadersNeedMemberCert: a client that sends the headers of
// a relayed write without a member certificate is audited all the same.
func TestAuditRelayHeadersNeedMemberCert(t *testing.T) {
	srv, lf := auditServer(t, rrPolicy)
	req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/audit/configmaps", nil)
	req.Header.Set("Authorization", "Bearer t")
	req.Header.Set("X-Litek8s-Forwarded", "1")
	req.Header.Set("X-Litek8s-Remote-User", "someone")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("list: %d %s", rec.Code, rec.Body)
	}
	var n int
	for _, ev := range readAudit(t, lf) {
		if ev.Verb == "list" && ev.ObjectRef != nil && ev.ObjectRef.Namespace == "audit" {
			n++
			if ev.User.Username == "someone" || ev.User.Username == "" {
				t.Errorf("user %q, want the token's, not the header's", ev.User.Username)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d events for the list, want 1", n)
	}
}

// BenchmarkAudit is what auditing costs a list of 100 ConfigMaps and a get:
// no policy, a policy whose rule for them is None (the Audit-Id header and
// the rule lookup), Metadata, and RequestResponse (the whole answer in the
// event), written to a file.
func BenchmarkAudit(b *testing.B) {
	none := "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n"
	meta := "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"
	rr := "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n"
	for _, p := range []struct{ name, policy string }{{"nopolicy", ""}, {"none", none}, {"metadata", meta}, {"requestresponse", rr}} {
		var srv *api.Server
		if p.policy == "" {
			srv = benchServer(b, 0)
		} else {
			srv, _ = auditServer(b, p.policy)
		}
		fillBench(b, srv, 100)
		for _, c := range []struct{ name, path string }{
			{"list", "/api/v1/namespaces/bench/configmaps?resourceVersion=0"},
			{"get", "/api/v1/namespaces/bench/configmaps/cm-000042?resourceVersion=0"},
		} {
			b.Run(p.name+"/"+c.name, func(b *testing.B) {
				req := httptest.NewRequest(http.MethodGet, c.path, nil)
				req.Header.Set("Authorization", "Bearer t")
				req.Header.Set("Accept", "application/json")
				w := &discardWriter{h: http.Header{}}
				b.ReportAllocs()
				for b.Loop() {
					srv.ServeHTTP(w, req)
				}
			})
		}
	}
}

// TestAuditOmitManagedFields: omitManagedFields drops managedFields from
// the request and response objects, a rule's false overriding the
// policy's true.
func TestAuditOmitManagedFields(t *testing.T) {
	srv, lf := auditServer(t, `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
omitManagedFields: true
rules:
- level: RequestResponse
  namespaces: [bench]
  omitManagedFields: false
- level: RequestResponse
`)
	for _, ns := range []string{"audit", "bench"} {
		body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"m1","managedFields":[{"manager":"me","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{}}}]},"data":{"k":"v"}}`
		req := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer t")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated || !strings.Contains(rec.Body.String(), "managedFields") {
			t.Fatalf("create in %s: %d %s", ns, rec.Code, rec.Body)
		}
	}
	var seen int
	for _, ev := range readAudit(t, lf) {
		if ev.Verb != "create" || ev.ObjectRef == nil || ev.ObjectRef.Name != "m1" {
			continue
		}
		seen++
		req, _ := ev.RequestObject.MarshalJSON()
		resp, _ := ev.ResponseObject.MarshalJSON()
		want := ev.ObjectRef.Namespace == "bench" // the rule keeps them
		if strings.Contains(string(req), "managedFields") != want || strings.Contains(string(resp), "managedFields") != want {
			t.Errorf("%s: managedFields kept %v, want %v:\n%s\n%s", ev.ObjectRef.Namespace, !want, want, req, resp)
		}
		if !strings.Contains(string(resp), `"data":{"k":"v"}`) {
			t.Errorf("%s: response object %s", ev.ObjectRef.Namespace, resp)
		}
	}
	if seen != 2 {
		t.Errorf("%d create events, want 2", seen)
	}
}

// TestAuditPanic: a handler that panics is recorded at stage Panic with
// kube's 500 status, and the panic goes on to net/http.
func TestAuditPanic(t *testing.T) {
	dir := t.TempDir()
	pf, lf := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "audit.log")
	if err := os.WriteFile(pf, []byte(rrPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := audit.Open(audit.Config{PolicyFile: pf, Path: lf}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	srv := newAPIServer(t, func(c *api.Config) {
		c.Audit = l
		c.Admin = http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })
	})
	req := httptest.NewRequest(http.MethodGet, "/admin/v1/status", nil)
	req.Header.Set("Authorization", "Bearer t")
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v, want the handler's panic", p)
			}
		}()
		srv.ServeHTTP(httptest.NewRecorder(), req)
	}()
	var n int
	for _, ev := range readAudit(t, lf) {
		if ev.RequestURI == "/admin/v1/status" {
			n++
			if ev.Stage != auditv1.StagePanic || ev.ResponseStatus.Code != 500 || ev.ResponseStatus.Message != "APIServer panic'd: boom" {
				t.Errorf("event %+v", ev)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d events for the request, want its Panic", n)
	}
}

// TestAuditUnauthenticated: a request with a bad token is recorded as kube
// records failed authentication: one ResponseStarted event, code 401, no
// user.
func TestAuditUnauthenticated(t *testing.T) {
	srv, lf := auditServer(t, rrPolicy)
	req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/audit/configmaps/x", nil)
	req.Header.Set("Authorization", "Bearer wrong")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("bad token: %d", rec.Code)
	}
	var got []auditv1.Event
	for _, ev := range readAudit(t, lf) {
		if ev.ResponseStatus != nil && ev.ResponseStatus.Code == http.StatusUnauthorized {
			got = append(got, ev)
		}
	}
	if len(got) != 1 || got[0].Stage != auditv1.StageResponseStarted || got[0].User.Username != "" ||
		got[0].Verb != "get" || got[0].ObjectRef == nil || got[0].ObjectRef.Name != "x" || got[0].Level != auditv1.LevelRequestResponse {
		t.Errorf("401 events: %+v", got)
	}
}
