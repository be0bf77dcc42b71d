package httpx

import (
	"net/http"
	"net/http/httputil"
	"net/url"
)

// Forwarder relays a request a follower got to the leader and relays the
// answer back, with the caller's headers (its bearer token).
type Forwarder struct {
	// Header marks a relayed request (its value is From): a member that
	// gets one but does not lead must not relay it again (Relayed).
	Header string
	From   string
	// Transport reaches the other members.
	Transport http.RoundTripper
	// OnError answers when the leader at leaderURL cannot be reached.
	OnError func(w http.ResponseWriter, leaderURL string, err error)
	// Prepare, when set, changes the outgoing request (e.g. to carry the
	// user the follower authenticated: a client certificate does not
	// travel with the request).
	Prepare func(out *http.Request)
}

// Relayed reports whether another member relayed r here.
func (f Forwarder) Relayed(r *http.Request) bool { return r.Header.Get(f.Header) != "" }

// Forward relays r to the member at leaderURL and writes its answer to w.
// It fails only when leaderURL is not a URL (nothing is written then).
func (f Forwarder) Forward(w http.ResponseWriter, r *http.Request, leaderURL string) error {
	target, err := url.Parse(leaderURL)
	if err != nil {
		return err
	}
	proxy := &httputil.ReverseProxy{
		Transport: f.Transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Header.Set(f.Header, f.From)
			if f.Prepare != nil {
				f.Prepare(pr.Out)
			}
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			f.OnError(w, leaderURL, err)
		},
	}
	proxy.ServeHTTP(w, r)
	return nil
}
