package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestWriteErrorAfterStart: an error that comes after the answer started
// (a deadline in the middle of a streamed list) is logged, not written
// into the body; before, it is kube's 504.
func TestWriteErrorAfterStart(t *testing.T) {
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	req := httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil)

	rec := httptest.NewRecorder()
	lw := &limitedWriter{ResponseWriter: rec}
	lw.WriteHeader(http.StatusOK)
	lw.Write([]byte(`{"kind":"ConfigMapList","items":[`))
	s.writeError(&recorder{ResponseWriter: lw}, req, context.DeadlineExceeded) // as instrument wraps it
	if got := rec.Body.String(); got != `{"kind":"ConfigMapList","items":[` || rec.Code != http.StatusOK {
		t.Errorf("after the answer started: %d %s", rec.Code, got)
	}

	rec = httptest.NewRecorder()
	s.writeError(&limitedWriter{ResponseWriter: rec}, req, context.DeadlineExceeded)
	const want = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}` + "\n"
	if rec.Code != http.StatusGatewayTimeout || rec.Body.String() != want || rec.Header().Get("Retry-After") != "" {
		t.Errorf("before: %d %s %v", rec.Code, rec.Body, rec.Header())
	}
}
