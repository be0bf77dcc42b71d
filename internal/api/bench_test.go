package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/litek8s/litek8s/internal/api"
)

// benchServer is a real single-member store (Raft on 127.0.0.1:0, raft.db
// on disk) behind the API handler, filled with n ConfigMaps in "bench".
func benchServer(tb testing.TB, n int) *api.Server {
	tb.Helper()
	srv := newAPIServer(tb, nil, "bench")
	for i := range n {
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%06d","labels":{"app":"bench","shard":"s%d"}},"data":{"key":"value-%d","other":"some longer configuration text to make the object realistic"}}`, i, i%10, i)
		req := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/bench/configmaps", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer t")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			tb.Fatalf("create %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	return srv
}

// discardWriter is a ResponseWriter that counts bytes and keeps nothing.
type discardWriter struct {
	h http.Header
	n int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { d.n += len(b); return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}

const partialListAccept = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json"

const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

// BenchmarkServeList serves a whole list as JSON, as a Table (kubectl get)
// and with a label selector, from the stored bytes.
func BenchmarkServeList(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		srv := benchServer(b, n)
		for _, c := range []struct{ name, query, accept string }{
			{"json", "", "application/json"},
			{"table", "?limit=500", tableAccept},
			{"selector", "?labelSelector=shard%3Ds3", "application/json"},
			{"fieldselector", "?fieldSelector=metadata.name%21%3Dcm-000003", "application/json"},
			{"partialobjectmetadata", "?limit=500", partialListAccept},
		} {
			b.Run(fmt.Sprintf("%s/%d", c.name, n), func(b *testing.B) {
				req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/bench/configmaps"+c.query+"&resourceVersion=0", nil)
				if c.query == "" {
					req = httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/bench/configmaps?resourceVersion=0", nil)
				}
				req.Header.Set("Authorization", "Bearer t")
				req.Header.Set("Accept", c.accept)
				w := &discardWriter{h: http.Header{}}
				b.ReportAllocs()
				for b.Loop() {
					w.n = 0
					srv.ServeHTTP(w, req)
				}
				b.SetBytes(int64(w.n))
			})
		}
	}
}
