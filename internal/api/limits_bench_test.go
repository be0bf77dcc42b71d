package api

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// BenchmarkLimit is what the limit wrapper adds to every request: the
// same trivial handler alone and behind it, for a read, a write with a
// body, a watch (no deadline; its query is parsed to tell it is one) and
// an admin read (no deadline: the in-flight counting and body check
// alone). Compare with BenchmarkServeGet for the share of a real request.
func BenchmarkLimit(b *testing.B) {
	cfg := DefaultConfig()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s := &Server{cfg: cfg, log: cfg.Logger}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			io.Copy(io.Discard, r.Body)
		}
		w.WriteHeader(http.StatusOK)
	})
	limited := s.limit(ok)
	for _, c := range []struct {
		name, method, target, body string
		h                          http.Handler
	}{
		{"get/bare", http.MethodGet, "/api/v1/namespaces/a/configmaps/b", "", ok},
		{"get/limited", http.MethodGet, "/api/v1/namespaces/a/configmaps/b", "", limited},
		{"post/bare", http.MethodPost, "/api/v1/namespaces/a/configmaps", `{"kind":"ConfigMap"}`, ok},
		{"post/limited", http.MethodPost, "/api/v1/namespaces/a/configmaps", `{"kind":"ConfigMap"}`, limited},
		{"watch/limited", http.MethodGet, "/api/v1/namespaces/a/configmaps?watch=true", "", limited},
		// no deadline (admin): what counting in flight and the body check cost
		{"admin/limited", http.MethodGet, "/admin/v1/status", "", limited},
	} {
		b.Run(c.name, func(b *testing.B) {
			w := &deadlineRecorder{httptest.NewRecorder()}
			body := strings.NewReader(c.body)
			req := httptest.NewRequest(c.method, c.target, nil)
			b.ReportAllocs()
			for b.Loop() {
				req.Body = http.NoBody
				if c.body != "" {
					body.Reset(c.body)
					req.Body, req.ContentLength = io.NopCloser(body), int64(len(c.body))
				}
				c.h.ServeHTTP(w, req)
			}
		})
	}
}

// deadlineRecorder takes deadlines as a connection does (without the
// timers: what the runtime's poller costs is the same on every request).
type deadlineRecorder struct{ *httptest.ResponseRecorder }

func (deadlineRecorder) SetReadDeadline(time.Time) error  { return nil }
func (deadlineRecorder) SetWriteDeadline(time.Time) error { return nil }
