package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kadmission "k8s.io/apiserver/pkg/admission"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/apiserver/pkg/warning"

	"github.com/litek8s/litek8s/internal/api"
	"github.com/litek8s/litek8s/internal/api/admission"
	"github.com/litek8s/litek8s/internal/audit"
)

// recordingPlugin is a test admission plugin: it records what it is
// called with, adds a label when mutating, and denies objects (or
// deletions of objects) labelled deny=true.
type recordingPlugin struct {
	*kadmission.Handler
	mu       sync.Mutex
	calls    []string // "<phase> <op> <name> uid=<uid> user=<user> dry=<dry>"
	reinvoke bool     // ask once for reinvocation
}

func (p *recordingPlugin) record(phase string, a kadmission.Attributes) {
	uid := ""
	if m, ok := a.GetObject().(metav1.Object); ok {
		uid = string(m.GetUID())
	}
	p.mu.Lock()
	p.calls = append(p.calls, fmt.Sprintf("%s %s %s uid=%v user=%s dry=%v", phase, a.GetOperation(), a.GetName(), uid != "", a.GetUserInfo().GetName(), a.IsDryRun()))
	p.mu.Unlock()
}

func (p *recordingPlugin) Admit(ctx context.Context, a kadmission.Attributes, _ kadmission.ObjectInterfaces) error {
	p.record("admit", a)
	if m, ok := a.GetObject().(metav1.Object); ok {
		l := m.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l["mutated"] = "yes"
		m.SetLabels(l)
	}
	if p.reinvoke && !a.GetReinvocationContext().IsReinvoke() {
		a.GetReinvocationContext().SetShouldReinvoke()
	}
	return nil
}

func (p *recordingPlugin) Validate(ctx context.Context, a kadmission.Attributes, _ kadmission.ObjectInterfaces) error {
	p.record("validate", a)
	warning.AddWarning(ctx, "", "checked by the test plugin")
	a.AddAnnotation("test.litek8s.io/checked", "yes")
	obj := a.GetObject()
	if a.GetOperation() == kadmission.Delete {
		obj = a.GetOldObject()
	}
	if m, ok := obj.(metav1.Object); ok && m.GetLabels()["deny"] == "true" {
		return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, m.GetName(), fmt.Errorf("denied by the test plugin"))
	}
	return nil
}

func (p *recordingPlugin) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.calls
	p.calls = nil
	return c
}

func newChainServer(t *testing.T, p *recordingPlugin) *api.Server {
	t.Helper()
	chain, err := admission.New(admission.Config{Plugins: []kadmission.Interface{p}})
	if err != nil {
		t.Fatal(err)
	}
	return newAPIServer(t, func(c *api.Config) { c.Admission = chain }, "adm")
}

func serveAdm(srv *api.Server, method, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer t")
	req.Header.Set("Content-Type", "application/json")
	if method == http.MethodPatch {
		req.Header.Set("Content-Type", "application/merge-patch+json")
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	return rec
}

// TestDynamicAdmissionWritePath: the chain's mutating plugins run before
// the server fills in the name and uid, validating ones after, on
// create, update, patch and delete; their warnings come back as Warning
// headers; a denial stores nothing.
func TestDynamicAdmissionWritePath(t *testing.T) {
	p := &recordingPlugin{Handler: kadmission.NewHandler(kadmission.Create, kadmission.Update, kadmission.Delete)}
	srv := newChainServer(t, p)
	const cms = "/api/v1/namespaces/adm/configmaps"

	rec := serveAdm(srv, http.MethodPost, cms, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"gen-"}}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	var cm struct{ Metadata metav1.ObjectMeta }
	if err := json.Unmarshal(rec.Body.Bytes(), &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Metadata.Labels["mutated"] != "yes" {
		t.Errorf("the mutating plugin's label was not stored: %v", cm.Metadata.Labels)
	}
	calls := p.take()
	wantCreate := []string{"admit CREATE  uid=false user=" + "system:apiserver dry=false", "validate CREATE " + cm.Metadata.Name + " uid=true user=system:apiserver dry=false"}
	if strings.Join(calls, "|") != strings.Join(wantCreate, "|") {
		t.Errorf("create calls:\n%q\nwant\n%q", calls, wantCreate)
	}
	if w := rec.Header().Values("Warning"); len(w) != 1 || !strings.Contains(w[0], "checked by the test plugin") {
		t.Errorf("Warning headers %q", w)
	}

	name := cm.Metadata.Name
	rec = serveAdm(srv, http.MethodPatch, cms+"/"+name+"?dryRun=All", `{"data":{"a":"b"}}`)
	if rec.Code != http.StatusOK {
		t.Fatalf("patch: %d %s", rec.Code, rec.Body)
	}
	if calls := p.take(); len(calls) != 2 || calls[0] != "admit UPDATE "+name+" uid=true user=system:apiserver dry=true" || !strings.HasPrefix(calls[1], "validate UPDATE "+name) {
		t.Errorf("patch calls %q", calls)
	}

	// Denied: nothing stored.
	rec = serveAdm(srv, http.MethodPost, cms, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"denied","labels":{"deny":"true"}}}`)
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "denied by the test plugin") {
		t.Errorf("denied create: %d %s", rec.Code, rec.Body)
	}
	if rec := serveAdm(srv, http.MethodGet, cms+"/denied", ""); rec.Code != http.StatusNotFound {
		t.Errorf("a denied create was stored: %d", rec.Code)
	}
	p.take()

	// An update denied: the stored object keeps its labels.
	rec = serveAdm(srv, http.MethodPatch, cms+"/"+name, `{"metadata":{"labels":{"deny":"true"}}}`)
	if rec.Code != http.StatusForbidden {
		t.Errorf("denied patch: %d %s", rec.Code, rec.Body)
	}
	if rec := serveAdm(srv, http.MethodGet, cms+"/"+name, ""); strings.Contains(rec.Body.String(), `"deny"`) {
		t.Errorf("a denied update was stored: %s", rec.Body)
	}
	p.take()

	rec = serveAdm(srv, http.MethodDelete, cms+"/"+name, "")
	if rec.Code != http.StatusOK {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body)
	}
	if calls := p.take(); len(calls) != 2 || calls[0] != "admit DELETE "+name+" uid=false user=system:apiserver dry=false" || !strings.HasPrefix(calls[1], "validate DELETE "+name) {
		t.Errorf("delete calls %q", calls)
	}
}

// TestDynamicAdmissionReinvocation: a plugin that asks for reinvocation
// is called a second time, as kube's reinvoker does.
func TestDynamicAdmissionReinvocation(t *testing.T) {
	p := &recordingPlugin{Handler: kadmission.NewHandler(kadmission.Create), reinvoke: true}
	srv := newChainServer(t, p)
	rec := serveAdm(srv, http.MethodPost, "/api/v1/namespaces/adm/configmaps", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"r"}}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	var admits int
	for _, c := range p.take() {
		if strings.HasPrefix(c, "admit ") {
			admits++
		}
	}
	if admits != 2 {
		t.Errorf("Admit ran %d times, want 2 (reinvoked once)", admits)
	}
}

// idlePlugin has nothing configured: the chain must not call it.
type idlePlugin struct{ recordingPlugin }

func (*idlePlugin) Idle() bool { return true }

func TestDynamicAdmissionIdleSkipped(t *testing.T) {
	p := &idlePlugin{recordingPlugin{Handler: kadmission.NewHandler(kadmission.Create)}}
	chain, err := admission.New(admission.Config{Plugins: []kadmission.Interface{p}})
	if err != nil {
		t.Fatal(err)
	}
	if chain.Mutates(kadmission.Create) || chain.Validates(kadmission.Create) {
		t.Error("an idle plugin makes the chain active")
	}
	srv := newAPIServer(t, func(c *api.Config) { c.Admission = chain }, "adm")
	if rec := serveAdm(srv, http.MethodPost, "/api/v1/namespaces/adm/configmaps", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"i"}}`); rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	if c := p.take(); len(c) != 0 {
		t.Errorf("an idle plugin was called: %q", c)
	}
}

// BenchmarkCreateConfigMapIdleChain is BenchmarkCreateConfigMap with a
// chain whose plugin has nothing configured (what a member runs without
// webhooks or policies): it must cost what no chain costs.
func BenchmarkCreateConfigMapIdleChain(b *testing.B) {
	p := &idlePlugin{recordingPlugin{Handler: kadmission.NewHandler(kadmission.Create, kadmission.Update, kadmission.Delete)}}
	chain, err := admission.New(admission.Config{Plugins: []kadmission.Interface{p, p}})
	if err != nil {
		b.Fatal(err)
	}
	benchCreate(b, newAPIServer(b, func(c *api.Config) { c.Admission = chain }, "bench"))
}

// TestDynamicAdmissionAuditAnnotations: what a plugin annotates reaches the
// request's audit event.
func TestDynamicAdmissionAuditAnnotations(t *testing.T) {
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
	p := &recordingPlugin{Handler: kadmission.NewHandler(kadmission.Create)}
	chain, err := admission.New(admission.Config{Plugins: []kadmission.Interface{p}})
	if err != nil {
		t.Fatal(err)
	}
	srv := newAPIServer(t, func(c *api.Config) { c.Admission, c.Audit = chain, l }, "adm")
	if rec := serveAdm(srv, http.MethodPost, "/api/v1/namespaces/adm/configmaps", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`); rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	var found bool
	for _, ev := range readAudit(t, lf) {
		if ev.Verb == "create" && ev.Stage == auditv1.StageResponseComplete {
			found = ev.Annotations["test.litek8s.io/checked"] == "yes"
		}
	}
	if !found {
		t.Error("the plugin's audit annotation is not in the create's ResponseComplete event")
	}
}
