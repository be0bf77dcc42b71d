package kubeletclient

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
)

// strippedHeaders are the client's credentials to this API: they stay
// here (kube's authentication filter removes them once it has used them).
var strippedHeaders = []string{"Authorization", "Impersonate-User", "Impersonate-Group", "Impersonate-Uid",
	"X-Remote-User", "X-Remote-Group", "X-Remote-Uid"}

// Proxy relays r to target through rt: the method, the body, the headers
// but the client's credentials, and a protocol upgrade (SPDY/3.1 for
// exec, attach and port-forward; WebSocket with the channel.k8s.io and
// portforward.k8s.io subprotocols), after which it copies both ways until
// either side closes. The answer is flushed as it arrives (logs with
// follow). onError answers when target cannot be reached (nothing was
// written yet).
func Proxy(w http.ResponseWriter, r *http.Request, target *url.URL, rt http.RoundTripper,
	onError func(http.ResponseWriter, *http.Request, error)) {
	p := &httputil.ReverseProxy{
		Transport: rt,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = target
			pr.Out.Host = target.Host
			for _, h := range strippedHeaders {
				pr.Out.Header.Del(h)
			}
			for h := range pr.Out.Header {
				if strings.HasPrefix(strings.ToLower(h), "x-remote-extra-") || strings.HasPrefix(strings.ToLower(h), "impersonate-extra-") {
					pr.Out.Header.Del(h)
				}
			}
		},
		FlushInterval: -1, // flush every write: logs follow, event streams
		ErrorHandler:  onError,
	}
	p.ServeHTTP(w, r)
}
