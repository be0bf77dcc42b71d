package membertest

import (
	"io"
	"net/http"
	"time"
)

// RetryUnavailable wraps a client transport so that a request answered
// 503 Service Unavailable is sent again for up to 10 seconds. litek8s
// answers 503 when no leader is known: nothing was proposed, so a retry
// cannot apply a write twice. Tests use it for their own setup and
// stimulus writes, which a Raft election during a -race run on a small
// machine must not fail; clients under test go without it.
func RetryUnavailable(rt http.RoundTripper) http.RoundTripper {
	return retryUnavailable{rt}
}

type retryUnavailable struct{ next http.RoundTripper }

func (r retryUnavailable) RoundTrip(req *http.Request) (*http.Response, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := r.next.RoundTrip(req)
		if err != nil || resp.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) ||
			(req.Body != nil && req.GetBody == nil) {
			return resp, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-time.After(50 * time.Millisecond):
		}
		if req.Body != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
	}
}
