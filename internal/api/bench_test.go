package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/litek8s/litek8s/internal/api"
)

// benchServer is a real single-member store (Raft on 127.0.0.1:0, its log
// on disk) behind the API handler, filled with n ConfigMaps in "bench",
// with metrics (as members run it).
func benchServer(tb testing.TB, n int) *api.Server { return benchServerMetrics(tb, n, true) }

func benchServerMetrics(tb testing.TB, n int, metrics bool) *api.Server {
	tb.Helper()
	srv := newAPIServer(tb, func(c *api.Config) {
		if metrics {
			c.Metrics = prometheus.NewRegistry()
		}
	}, "bench")
	fillBench(tb, srv, n)
	return srv
}

// fillBench creates n ConfigMaps in "bench".
func fillBench(tb testing.TB, srv *api.Server, n int) {
	tb.Helper()
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
}

// discardWriter is a ResponseWriter that counts bytes and keeps nothing.
type discardWriter struct {
	h http.Header
	n int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { d.n += len(b); return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}

// SetReadDeadline and SetWriteDeadline accept the request deadlines
// (limits.go) as a connection does, without its timers.
func (d *discardWriter) SetReadDeadline(time.Time) error  { return nil }
func (d *discardWriter) SetWriteDeadline(time.Time) error { return nil }

const partialListAccept = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json"

const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

// BenchmarkServeList serves a whole list as JSON, as a Table (kubectl get)
// and with a label selector, from the stored bytes.
func BenchmarkServeList(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		srv := benchServer(b, n)
		for _, c := range []struct{ name, query, accept string }{
			{"json", "", "application/json"},
			{"table", "?limit=500", tableAccept},
			{"page", "?limit=50", "application/json"},
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

// TestServeListAllocsFlat (issue 4, target 6): the allocations of a list
// request do not grow with the number of objects, whatever its shape.
func TestServeListAllocsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("fills two stores")
	}
	queries := []struct{ name, query, accept string }{
		{"json", "", "application/json"},
		{"table", "&limit=50", tableAccept}, // both sizes have a next page
		{"page", "&limit=50", "application/json"},
		{"selector", "&labelSelector=shard%3Ds3", "application/json"},
		{"partialobjectmetadata", "", partialListAccept},
	}
	allocs := func(srv *api.Server, query, accept string) float64 {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/bench/configmaps?resourceVersion=0"+query, nil)
		req.Header.Set("Authorization", "Bearer t")
		req.Header.Set("Accept", accept)
		w := &discardWriter{h: http.Header{}}
		srv.ServeHTTP(w, req) // warm the buffer pool
		return testing.AllocsPerRun(20, func() { srv.ServeHTTP(w, req) })
	}
	small, large := benchServer(t, 100), benchServer(t, 3000)
	for _, q := range queries {
		a, b := allocs(small, q.query, q.accept), allocs(large, q.query, q.accept)
		t.Logf("%s: %.0f allocs at 100 objects, %.0f at 3,000", q.name, a, b)
		// Per-item allocations would add thousands, per-64-KiB-chunk ones
		// about 30. A few are neither: a pooled buffer that grows once,
		// and sync.Pool, which drops a random part of what is put back
		// under the race detector.
		if b > a+8 {
			t.Errorf("%s: %.0f allocs at 3,000 objects against %.0f at 100", q.name, b, a)
		}
	}
}

// BenchmarkServeGet serves one stored object as JSON (the most frequent
// request) and as a one-row Table, and as JSON without metrics (what
// instrumentation costs). resourceVersion=0 reads this member's state, as
// BenchmarkServeList does: a consistent read would measure Raft's read
// index instead of the handler.
func BenchmarkServeGet(b *testing.B) {
	srv, bare := benchServer(b, 100), benchServerMetrics(b, 100, false)
	for _, c := range []struct {
		name, accept string
		srv          *api.Server
	}{
		{"json", "application/json", srv},
		{"table", tableAccept, srv},
		{"json-nometrics", "application/json", bare},
	} {
		b.Run(c.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/bench/configmaps/cm-000042?resourceVersion=0", nil)
			req.Header.Set("Authorization", "Bearer t")
			req.Header.Set("Accept", c.accept)
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				w.n = 0
				c.srv.ServeHTTP(w, req)
			}
			b.SetBytes(int64(w.n))
		})
	}
}
