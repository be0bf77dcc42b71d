package api

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"

	"github.com/litek8s/litek8s/internal/auth"
	"github.com/litek8s/litek8s/internal/kv"
)

// forwarder relays writes that reach a follower to the leader, so that a
// client never sees "not the leader".
type forwarder struct {
	store Store
	wait  time.Duration
	proxy *httputil.ReverseProxy
}

type leaderKey struct{}

// forwardedHeader marks a request relayed by a member, so that it is never
// relayed twice.
const forwardedHeader = "X-Litek8s-Forwarded"

// newForwarder relays writes to the leader through rt; writeErr answers a
// relay that failed with a Status.
func newForwarder(store Store, rt http.RoundTripper, wait time.Duration,
	writeErr func(http.ResponseWriter, *http.Request, error)) *forwarder {
	f := &forwarder{store: store, wait: wait}
	f.proxy = &httputil.ReverseProxy{
		Transport: rt,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(pr.In.Context().Value(leaderKey{}).(*url.URL))
			pr.Out.Host = pr.In.Host
			pr.Out.Header.Set(forwardedHeader, "1")
			auth.RelayUser(pr.Out.Header, auth.UserFrom(pr.In.Context()))
		},
		// A leader that could not be dialled got nothing: the write was not
		// made, and the client may send it again (503, Retry-After). A
		// connection that broke later leaves the outcome unknown (500, no
		// Retry-After: client-go must not resend it by itself).
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			var op *net.OpError
			if errors.As(err, &op) && op.Op == "dial" {
				writeErr(w, r, availabilityErr(kv.ErrNoLeader))
				return
			}
			writeErr(w, r, availabilityErr(kv.ErrUnknownOutcome))
		},
	}
	return f
}

// forward relays r to the leader when this member is not the leader. It
// returns handled=true when it answered (or failed to); the caller then
// returns err. Mutating handlers call it first.
func (s *Server) forward(w http.ResponseWriter, r *http.Request) (handled bool, err error) {
	ctx, cancel := context.WithTimeout(r.Context(), s.fwd.wait)
	defer cancel()
	var leader string
	var self bool
	for {
		u, me, ok := s.store.Leader()
		if ok {
			leader, self = u, me
			break
		}
		select {
		case <-ctx.Done():
			return true, availabilityErr(kv.ErrNoLeader)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if self {
		return false, nil
	}
	if r.Header.Get(forwardedHeader) != "" { // the leader we forwarded to lost leadership
		return true, availabilityErr(kv.ErrNoLeader)
	}
	target, err := url.Parse(leader)
	if err != nil {
		return true, err
	}
	r = r.WithContext(context.WithValue(r.Context(), leaderKey{}, target))
	w.Header().Del("Warning") // the leader's answer carries every warning
	s.fwd.proxy.ServeHTTP(w, r)
	if s.metrics != nil {
		s.metrics.forwardedWrite(w)
	}
	return true, nil
}
