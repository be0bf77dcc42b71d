package policy_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkCreateNoPolicy is a dry-run create of a ConfigMap through the
// API on a real single-member store (the write path's CPU cost, without
// Raft's disk time), without an admission chain (before) and with the
// ValidatingAdmissionPolicy plugin in it but no binding (after): the
// write must cost the same.
func BenchmarkCreateNoPolicy(b *testing.B) {
	for _, c := range []struct {
		name  string
		chain bool
	}{{"chain=none", false}, {"chain=policy", true}} {
		b.Run(c.name, func(b *testing.B) {
			e := newEnvChain(b, c.chain, "bench")
			b.ReportAllocs()
			const body = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"k":"v"}}`
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/bench/configmaps?dryRun=All", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer t")
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				e.srv.ServeHTTP(rec, req)
				if rec.Code != http.StatusCreated {
					b.Fatalf("create: %d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}

// BenchmarkValidate is the plugin alone on a deployment: no binding (the
// fast path), and a bound policy that matches and admits (compiled once,
// evaluated per request).
func BenchmarkValidate(b *testing.B) {
	e := newEnv(b, "default")
	d := deployment("default", "d", 3, nil)
	b.Run("bindings=0", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if r := e.admit(b, d, alice); r.err != nil {
				b.Fatal(r.err)
			}
		}
	})
	e.create(b, policiesPath, demoPolicy)
	e.create(b, bindingsPath, binding("demo", "demo-policy.example.com", "[Deny]", ""))
	b.Run("bindings=1", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if r := e.admit(b, d, alice); r.err != nil {
				b.Fatal(r.err)
			}
		}
	})
}
