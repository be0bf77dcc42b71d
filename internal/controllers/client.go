package controllers

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// inProcessHost is the host of the in-process API (never dialled).
const inProcessHost = "http://litek8s.in-process"

// newDynamicClient returns a dynamic client for controller that sends its
// requests to the API handler in process.
func newDynamicClient(cfg Config, api http.Handler, token, controller string) (*dynamic.DynamicClient, error) {
	c, err := dynamic.NewForConfig(inProcessConfig(cfg, api, token, controller))
	if err != nil {
		return nil, fmt.Errorf("controllers: %s client: %w", controller, err)
	}
	return c, nil
}

// inProcessConfig is a client configuration whose requests go to api in
// process, as controller.
func inProcessConfig(cfg Config, api http.Handler, token, controller string) *rest.Config {
	return &rest.Config{Host: inProcessHost, UserAgent: userAgent(cfg, controller), QPS: -1,
		Transport: &handlerTransport{h: api, token: token}}
}

// userAgent is kube-controller-manager's User-Agent shape (see doc.go).
func userAgent(cfg Config, controller string) string {
	return fmt.Sprintf("%s/%s (%s/%s) litek8s/%s", cfg.Manager, cfg.Version, runtime.GOOS, runtime.GOARCH, controller)
}

// handlerTransport is a RoundTripper that serves each request with an
// http.Handler in the calling goroutine and buffers the answer. It serves
// no watches (ErrWatch): controllers watch the local store.
type handlerTransport struct {
	h     http.Handler
	token string
}

func (t *handlerTransport) RoundTrip(req *http.Request) (resp *http.Response, err error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	if q := req.URL.Query().Get("watch"); q == "true" || q == "1" {
		return nil, ErrWatch
	}
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	r.RequestURI = r.URL.RequestURI()
	r.RemoteAddr = "in-process"
	if r.Body == nil {
		r.Body = http.NoBody
	}
	rw := &responseBuffer{header: make(http.Header)}
	defer func() {
		// net/http recovers a handler's panic and drops the connection:
		// the caller sees a failed request, and so does ours.
		if p := recover(); p != nil {
			resp, err = nil, fmt.Errorf("controllers: API handler panicked on %s %s: %v", req.Method, req.URL.Path, p)
		}
	}()
	t.h.ServeHTTP(rw, r)
	return rw.response(req), nil
}

// responseBuffer is an http.ResponseWriter that keeps the answer.
type responseBuffer struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (b *responseBuffer) Header() http.Header { return b.header }

func (b *responseBuffer) WriteHeader(code int) {
	if b.code == 0 && code >= 200 {
		b.code = code
	}
}

func (b *responseBuffer) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.body.Write(p)
}

// Flush is a no-op: the answer is returned whole.
func (b *responseBuffer) Flush() {}

func (b *responseBuffer) response(req *http.Request) *http.Response {
	b.WriteHeader(http.StatusOK)
	return &http.Response{
		Status: fmt.Sprintf("%d %s", b.code, http.StatusText(b.code)), StatusCode: b.code,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: b.header,
		Body: io.NopCloser(bytes.NewReader(b.body.Bytes())), ContentLength: int64(b.body.Len()), Request: req,
	}
}
