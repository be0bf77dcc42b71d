package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkCreateConfigMap is a dry-run create of a ConfigMap through the
// handler (decode, defaults, managedFields, admission, validation, the
// store's existence check; no Raft write, whose disk time would hide the
// rest): the write path's CPU cost.
func BenchmarkCreateConfigMap(b *testing.B) {
	benchCreate(b, newAPIServer(b, nil, "bench"))
}

func benchCreate(b *testing.B, srv http.Handler) {
	const body = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","labels":{"app":"bench"}},"data":{"key":"value"}}`
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/bench/configmaps?dryRun=All", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer t")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			b.Fatalf("create: %d %s", rec.Code, rec.Body)
		}
	}
}
