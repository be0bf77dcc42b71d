package policy_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/warning"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/litek8s/litek8s/internal/api"
	litekadmission "github.com/litek8s/litek8s/internal/api/admission"
	"github.com/litek8s/litek8s/internal/api/admission/policy"
	"github.com/litek8s/litek8s/internal/auth"
	"github.com/litek8s/litek8s/internal/raftstore"
)

// env is a real single-member store behind litek8s' API (so that the
// policies, bindings and params are defaulted and validated as stored)
// and a Plugin reading that store.
type env struct {
	url    string
	client *http.Client
	store  *raftstore.Store
	plugin *policy.Plugin
	srv    *api.Server
}

func newEnv(tb testing.TB, namespaces ...string) *env {
	tb.Helper()
	return newEnvChain(tb, false, namespaces...)
}

// newEnvChain is newEnv; with chain, the API runs the plugin in its
// admission chain (as a member does).
func newEnvChain(tb testing.TB, chain bool, namespaces ...string) *env {
	tb.Helper()
	sc := raftstore.DefaultConfig()
	sc.DataDir, sc.RaftAddr, sc.Bootstrap = tb.TempDir(), "127.0.0.1:0", true
	sc.HeartbeatTimeout, sc.ElectionTimeout, sc.LeaderLeaseTimeout = 100*time.Millisecond, 100*time.Millisecond, 50*time.Millisecond
	sc.Derive = api.Derive
	sc.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := raftstore.Open(sc)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	var srv *api.Server
	cfg := policy.DefaultConfig()
	cfg.Store = st
	cfg.Authorizer = policy.Authorizer(func(ctx context.Context, a auth.Attributes) (auth.Decision, error) {
		return srv.Authorize(ctx, a)
	})
	p, err := policy.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	ac := api.DefaultConfig()
	ac.Token, ac.Logger = "t", sc.Logger
	if chain {
		if ac.Admission, err = litekadmission.New(litekadmission.Config{Plugins: []admission.Interface{p}}); err != nil {
			tb.Fatal(err)
		}
	}
	srv, err = api.New(ac, st)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		if err := srv.EnsureNamespaces(ctx, namespaces...); err == nil {
			break
		} else if ctx.Err() != nil {
			tb.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	hs := httptest.NewServer(srv)
	tb.Cleanup(hs.Close)
	return &env{url: hs.URL, client: hs.Client(), store: st, plugin: p, srv: srv}
}

// do sends body (YAML or JSON) and fails the test unless the answer is want.
func (e *env) do(tb testing.TB, method, path, body string, want int) {
	tb.Helper()
	js, err := yaml.YAMLToJSON([]byte(body))
	if err != nil {
		tb.Fatal(err)
	}
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(string(js)))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer t")
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.client.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		tb.Fatalf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, b)
	}
}

func (e *env) create(tb testing.TB, path, body string) {
	tb.Helper()
	e.do(tb, http.MethodPost, path, body, http.StatusCreated)
}

const (
	policiesPath = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
	bindingsPath = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings"
)

// recorder collects the warnings kube's dispatcher adds through ctx.
type recorder struct {
	mu   sync.Mutex
	msgs []string
}

func (r *recorder) AddWarning(_, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, text)
}

// result is what one admission answered.
type result struct {
	err         error
	warnings    []string
	annotations map[string]string
}

var deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

func deployment(ns, name string, replicas int32, labels map[string]string) *appsv1.Deployment {
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(replicas)},
	}
}

// admit runs the plugin on the creation of d by u.
func (e *env) admit(tb testing.TB, d *appsv1.Deployment, u user.Info) result {
	tb.Helper()
	a := &annotated{Attributes: admission.NewAttributesRecord(d, nil, d.GroupVersionKind(), d.Namespace, d.Name, deploymentsGVR, "",
		admission.Create, &metav1.CreateOptions{}, false, u), annotations: map[string]string{}}
	rec := &recorder{}
	ctx := warning.WithWarningRecorder(tb.Context(), rec)
	err := e.plugin.Validate(ctx, a, admission.NewObjectInterfacesFromScheme(clientgoscheme.Scheme))
	return result{err: err, warnings: rec.msgs, annotations: a.annotations}
}

// annotated records the audit annotations a plugin adds (what the audit
// log of the request would carry).
type annotated struct {
	admission.Attributes
	annotations map[string]string
}

func (a *annotated) AddAnnotation(k, v string) error { a.annotations[k] = v; return nil }

func (a *annotated) AddAnnotationWithLevel(k, v string, _ auditinternal.Level) error {
	return a.AddAnnotation(k, v)
}

var alice = &user.DefaultInfo{Name: "alice", Groups: []string{"system:authenticated"}}

// wantDenied checks kube's answer for a denial.
func wantDenied(tb testing.TB, r result, code int32, reason metav1.StatusReason, name, msg string) {
	tb.Helper()
	msg = `deployments.apps "` + name + `" is forbidden: ` + msg
	var se *apierrors.StatusError
	if !errors.As(r.err, &se) {
		tb.Fatalf("want a denial %q, got %v", msg, r.err)
	}
	st := se.Status()
	if st.Code != code || st.Reason != reason || st.Message != msg {
		tb.Fatalf("got %d %s %q\nwant %d %s %q", st.Code, st.Reason, st.Message, code, reason, msg)
	}
}

func wantAdmitted(tb testing.TB, r result) {
	tb.Helper()
	if r.err != nil {
		tb.Fatalf("want admitted, got %v", r.err)
	}
}

// demoPolicy is the first example of kube's documentation.
const demoPolicy = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: "demo-policy.example.com"
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups:   ["apps"]
      apiVersions: ["v1"]
      operations:  ["CREATE", "UPDATE"]
      resources:   ["deployments"]
  validations:
    - expression: "object.spec.replicas <= 5"
`

func binding(name, policyName, actions, extra string) string {
	return `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: "` + name + `"
spec:
  policyName: "` + policyName + `"
  validationActions: ` + actions + `
` + extra
}

const testNamespaceOnly = `  matchResources:
    namespaceSelector:
      matchLabels:
        environment: test
`

// TestDenyReplicasLimit: kube's documented example and answer.
func TestDenyReplicasLimit(t *testing.T) {
	e := newEnv(t, "default")
	e.create(t, "/api/v1/namespaces", `{"metadata":{"name":"test","labels":{"environment":"test"}}}`)
	// no binding yet: nothing is evaluated
	wantAdmitted(t, e.admit(t, deployment("test", "d", 10, nil), alice))
	e.create(t, policiesPath, demoPolicy)
	wantAdmitted(t, e.admit(t, deployment("test", "d", 10, nil), alice)) // a policy without a binding does nothing
	if !e.plugin.Idle() {
		t.Fatal("Idle: false without a binding")
	}
	e.create(t, bindingsPath, binding("demo-binding-test.example.com", "demo-policy.example.com", "[Deny]", testNamespaceOnly))
	if e.plugin.Idle() {
		t.Fatal("Idle: true with a binding")
	}

	r := e.admit(t, deployment("test", "d", 10, nil), alice)
	wantDenied(t, r, 422, metav1.StatusReasonInvalid, "d",
		"ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-test.example.com' denied request: failed expression: object.spec.replicas <= 5")
	wantAdmitted(t, e.admit(t, deployment("test", "d", 5, nil), alice))
	// the binding's namespaceSelector: other namespaces are not checked
	wantAdmitted(t, e.admit(t, deployment("default", "d", 10, nil), alice))
}

// TestValidationActions: Warn adds kube's warning, Audit kube's audit
// annotation, Deny refuses; Warn and Audit admit.
func TestValidationActions(t *testing.T) {
	e := newEnv(t, "default")
	e.create(t, policiesPath, demoPolicy)
	e.create(t, bindingsPath, binding("b-warn-audit", "demo-policy.example.com", "[Warn, Audit]", ""))
	r := e.admit(t, deployment("default", "d", 10, nil), alice)
	wantAdmitted(t, r)
	wantWarn := "Validation failed for ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'b-warn-audit': failed expression: object.spec.replicas <= 5"
	if len(r.warnings) != 1 || r.warnings[0] != wantWarn {
		t.Fatalf("warnings %q, want [%q]", r.warnings, wantWarn)
	}
	var failures []map[string]any
	if err := json.Unmarshal([]byte(r.annotations["validation.policy.admission.k8s.io/validation_failure"]), &failures); err != nil {
		t.Fatalf("audit annotations %v: %v", r.annotations, err)
	}
	if len(failures) != 1 || failures[0]["message"] != "failed expression: object.spec.replicas <= 5" ||
		failures[0]["policy"] != "demo-policy.example.com" || failures[0]["binding"] != "b-warn-audit" {
		t.Fatalf("validation_failure %v", failures)
	}
	r = e.admit(t, deployment("default", "d", 3, nil), alice)
	if r.err != nil || len(r.warnings) != 0 || len(r.annotations) != 0 {
		t.Fatalf("a valid object: %+v", r)
	}
	e.create(t, bindingsPath, binding("b-deny", "demo-policy.example.com", "[Deny]", ""))
	r = e.admit(t, deployment("default", "d", 10, nil), alice)
	wantDenied(t, r, 422, metav1.StatusReasonInvalid, "d",
		"ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'b-deny' denied request: failed expression: object.spec.replicas <= 5")
}

// waitCRD waits until the custom resource at path is served.
func (e *env) waitCRD(tb testing.TB, path string) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, e.url+path, nil)
		req.Header.Set("Authorization", "Bearer t")
		resp, err := e.client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s is not served", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
