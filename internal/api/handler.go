package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/litek8s/litek8s/internal/api/registry"
)

var schemaNone = schema.GroupResource{}

// handlerFunc is an HTTP handler that returns its error instead of writing it.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// adapt turns a handlerFunc into an http.Handler: an error becomes a
// Kubernetes Status body with the matching HTTP code.
func (s *Server) adapt(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if responseStarted(w) { // too late for a Status: the client sees a cut answer
		s.log.Warn("request failed after its answer started", "method", r.Method, "path", r.URL.Path, "err", err)
		return
	}
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			// kube's timeout filter (WithTimeoutForNonLongRunningRequests)
			se = apierrors.NewTimeoutError("request did not complete within the allotted timeout", 0)
		} else {
			s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
			se = apierrors.NewInternalError(err)
		}
	}
	st := se.Status()
	st.Kind, st.APIVersion = "Status", "v1"
	code := int(st.Code)
	if code == 0 {
		code = http.StatusInternalServerError
	}
	if retry := st.Details; retry != nil && retry.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", itoa(int64(retry.RetryAfterSeconds)))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(code)
	if code == http.StatusNotAcceptable { // kube indents 406 bodies
		b, _ := json.MarshalIndent(&st, "", "  ")
		w.Write(b)
		return
	}
	json.NewEncoder(w).Encode(&st)
}

// writeRaw writes a stored object (or any compact JSON body) with code.
func writeRaw(w http.ResponseWriter, code int, raw []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache, private")
	w.WriteHeader(code)
	w.Write(raw)
	w.Write(newline)
}

var newline = []byte{'\n'}

// statusSuccess is the answer of a completed delete.
func statusSuccess(res *registry.Resource, name, uid string) []byte {
	st := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess,
		Details: &metav1.StatusDetails{Name: name, Group: res.Group, Kind: res.Resource, UID: typesUID(uid)}}
	b, _ := json.Marshal(&st)
	return b
}
