package api_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/litek8s/litek8s/internal/api"
	"github.com/litek8s/litek8s/internal/audit"
)

// auditServer is a real single-member API with an audit log of policy.
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
	return newAPIServer(tb, func(c *api.Config) { c.Audit = l }, "audit"), lf
}

// readAudit returns the events of the log at path.
func readAudit(t *testing.T, path string) []auditv1.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evs []auditv1.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev auditv1.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
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
