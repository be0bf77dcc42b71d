package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/litek8s/litek8s/internal/api/registry"
)

// Limits bound what requests may take from a member, as kube-apiserver's
// generic server options do: requests in flight by kind, the size of a
// body and of a stored object, and how long a request may run. Start from
// DefaultLimits.
type Limits struct {
	// MaxRequestsInflight bounds the read-only requests served at once
	// (kube's --max-requests-inflight); 0: no limit.
	MaxRequestsInflight int
	// MaxMutatingRequestsInflight bounds the writes served at once (kube's
	// --max-mutating-requests-inflight); 0: no limit.
	MaxMutatingRequestsInflight int
	// MaxWatchesInflight bounds the open watches, which kube leaves out of
	// both limits above; 0: no limit.
	MaxWatchesInflight int
	// MaxRequestBodyBytes bounds a request body (kube's 3 MiB).
	MaxRequestBodyBytes int64
	// MaxObjectBytes bounds an object as it would be stored, checked
	// before it is proposed (etcd's default --max-request-bytes, 1.5 MiB).
	MaxObjectBytes int
	// RequestTimeout is the deadline of a request that is not a watch;
	// ?timeout= may shorten it (kube's --request-timeout).
	RequestTimeout time.Duration
	// MinRequestTimeout is how long a watch without timeoutSeconds lasts at
	// least: it ends after a random time between it and twice it (kube's
	// --min-request-timeout).
	MinRequestTimeout time.Duration
}

// DefaultLimits returns kube-apiserver's defaults. kube counts no watches;
// 2000 is twice the fan-out bench/api_load holds on one member.
func DefaultLimits() Limits {
	return Limits{MaxRequestsInflight: 400, MaxMutatingRequestsInflight: 200, MaxWatchesInflight: 2000,
		MaxRequestBodyBytes: 3 << 20, MaxObjectBytes: 3 << 19,
		RequestTimeout: time.Minute, MinRequestTimeout: 30 * time.Minute}
}

// Validate reports the first invalid limit.
func (l *Limits) Validate() error {
	switch {
	case l.MaxRequestsInflight < 0 || l.MaxMutatingRequestsInflight < 0 || l.MaxWatchesInflight < 0:
		return errors.New("api: in-flight limits must not be negative (0: no limit)")
	case l.MaxRequestBodyBytes <= 0 || l.MaxObjectBytes <= 0:
		return errors.New("api: MaxRequestBodyBytes and MaxObjectBytes must be positive")
	case l.RequestTimeout <= 0 || l.MinRequestTimeout <= 0:
		return errors.New("api: RequestTimeout and MinRequestTimeout must be positive")
	}
	return nil
}

// requestClass is what a request counts against.
type requestClass int

const (
	classReadOnly requestClass = iota
	classMutating
	classWatch
	classes
)

// exempt requests are never limited: the health probes, and the traffic
// between members (Raft's transport, forwarded reads, joins), which must
// get through when clients saturate a member. Long-running connect
// requests (isLongRunning: exec, attach, port-forward, logs, proxies) are
// not limited either, as in kube.
func exempt(path string) bool {
	switch path {
	case "/livez", "/readyz", "/healthz":
		return true
	}
	return strings.HasPrefix(path, "/internal/")
}

// classify tells what r counts against: watches are long-running (the
// /watch/ paths are not served); GET and HEAD are read-only.
func classify(r *http.Request) requestClass {
	switch {
	case isWatch(r):
		return classWatch
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		return classReadOnly
	}
	return classMutating
}

// timeoutWriteGrace is how long after its deadline a request may still
// write its answer (the 504 of a store wait that hit the deadline); past
// it a response that is still being written is cut.
const timeoutWriteGrace = 5 * time.Second

// localKey marks the requests of this member's own controllers (LocalOnly):
// like kube's loopback system:masters they are never refused for load.
type localKey struct{}

// errTooManyRequests is kube's answer when a limit of requests in flight is
// reached (kube writes it as plain text; a Status says the same to
// clients that read Statuses, and client-go retries after Retry-After).
var errTooManyRequests = apierrors.NewTooManyRequests("Too many requests, please try again later.", 1)

// errTooLarge is kube's 413 for a body over limit bytes.
func errTooLarge(limit int64) error {
	return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))
}

// limit applies Limits to every request but the exempt ones: a request
// over its class's in-flight limit gets 429 (counted with atomics: no lock
// on the path of every request; litek8s_api_refused_requests_total counts
// the refusals), a body over the limit 413 (from
// Content-Length before anything is read, else while reading), and a
// request that is not a watch a deadline (watches end at their
// timeoutSeconds or MinRequestTimeout: watch.go). The deadline is the
// request context's, so that store waits end with kube's 504, and the
// connection's, so that a client that sends its body or reads the answer
// too slowly cannot hold the request past it.
func (s *Server) limit(next http.Handler) http.Handler {
	l := s.cfg.Limits
	max := [classes]int64{int64(l.MaxRequestsInflight), int64(l.MaxMutatingRequestsInflight), int64(l.MaxWatchesInflight)}
	var inflight [classes]atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if exempt(r.URL.Path) || isLongRunning(r) {
			next.ServeHTTP(w, r)
			return
		}
		class := classify(r)
		if max[class] > 0 && r.Context().Value(localKey{}) == nil {
			if n := inflight[class].Add(1); n > max[class] {
				inflight[class].Add(-1)
				s.metrics.refuse(refusedFor(class))
				s.writeError(w, r, errTooManyRequests)
				return
			}
			defer inflight[class].Add(-1)
		}
		if r.ContentLength > l.MaxRequestBodyBytes {
			s.writeError(w, r, errTooLarge(l.MaxRequestBodyBytes))
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(w, r.Body, l.MaxRequestBodyBytes)
		}
		if class == classWatch || strings.HasPrefix(r.URL.Path, "/admin/") {
			// Admin handlers bound their own waits, and a snapshot streams
			// for as long as it takes.
			next.ServeHTTP(w, r)
			return
		}
		timeout, err := requestTimeout(r, l.RequestTimeout)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		deadline, _ := ctx.Deadline()
		if conn := connOf(w); conn != nil {
			if r.Body != http.NoBody {
				conn.SetReadDeadline(deadline)
			}
			conn.SetWriteDeadline(deadline.Add(timeoutWriteGrace))
			// net/http resets neither for the next request on the
			// connection (the server has no ReadTimeout or WriteTimeout).
			defer conn.SetWriteDeadline(time.Time{})
		}
		r = r.WithContext(ctx)
		if r.ContentLength < 0 && r.Body != http.NoBody {
			// A body of unknown length (chunked) is read here, so that one
			// over the limit is kube's 413 on a follower too, which would
			// otherwise be relaying it to the leader when the limit hit.
			body, err := readBody(r)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		}
		next.ServeHTTP(&limitedWriter{ResponseWriter: w}, r)
	})
}

// deadliner is the part of a connection's ResponseWriter (net/http's, for
// HTTP/1 and HTTP/2) that sets its deadlines.
type deadliner interface {
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

// connOf finds w's deadlines through the writers that wrap it, as
// http.ResponseController does, without allocating one; nil when w has
// none (a recorder in tests, the controllers' in-process writer).
func connOf(w http.ResponseWriter) deadliner {
	for {
		switch t := w.(type) {
		case deadliner:
			return t
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return nil
		}
	}
}

// requestTimeout is the deadline of r: ?timeout= when it is shorter than
// max (kube's WithRequestDeadline: 0 or more means max).
func requestTimeout(r *http.Request, max time.Duration) (time.Duration, error) {
	if !strings.Contains(r.URL.RawQuery, "timeout=") {
		return max, nil
	}
	v := r.URL.Query().Get("timeout")
	if v == "" {
		return max, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid timeout specified in the request URL - %v", err))
	}
	if d > 0 && d < max {
		return d, nil
	}
	return max, nil
}

// watchTimeout is how long a watch without timeoutSeconds lasts: kube's
// random time between MinRequestTimeout and twice it, which spreads the
// relists of clients that started together.
func (s *Server) watchTimeout() time.Duration {
	min := s.cfg.Limits.MinRequestTimeout
	return min + rand.N(min)
}

// limitedWriter remembers whether the answer has started, so that an error
// that comes after (a deadline in the middle of a list) is not written
// into the body of a response already sent.
type limitedWriter struct {
	http.ResponseWriter
	started bool
}

func (w *limitedWriter) WriteHeader(code int) {
	if code >= 200 {
		w.started = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *limitedWriter) Write(b []byte) (int, error) {
	w.started = true
	return w.ResponseWriter.Write(b)
}

func (w *limitedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// responseStarted reports whether w (or a writer it wraps) has begun the
// answer.
func responseStarted(w http.ResponseWriter) bool {
	for {
		switch t := w.(type) {
		case *limitedWriter:
			return t.started
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return false
		}
	}
}

// checkObjectSize refuses an object of res whose stored form is over
// MaxObjectBytes, before it is proposed. kube stores it in etcd, which
// refuses it ("etcdserver: request is too large") and kube answers 500
// with that message (kubernetes/kubernetes#112152): a 5xx that clients
// retry. Here it is kube's 413 RequestEntityTooLarge Status, which no
// client retries, naming the object and both sizes. Creates, updates,
// patches and subresource writes (dry runs too) are checked; a deletion
// mark is not: it adds a few bytes, and an object must stay deletable.
func (s *Server) checkObjectSize(res *registry.Resource, name string, raw []byte) error {
	if limit := s.cfg.Limits.MaxObjectBytes; len(raw) > limit {
		return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
			"%s %q would be stored as %d bytes, limit is %d", res.Kind, name, len(raw), limit))
	}
	return nil
}
