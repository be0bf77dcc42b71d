package aggregator

import (
	"context"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/client-go/transport"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/litek8s/litek8s/internal/auth"
)

// discoveryTimeout bounds a proxied discovery request (/apis/<g>/<v>), as
// kube's aggregator does.
const discoveryTimeout = 5 * time.Second

// Proxy serves r from svc's Service on behalf of u, who the API server
// authenticated (and authorized). Errors before anything was sent are
// returned (kube's 503 when the Service cannot be reached); errors while
// proxying go to fail, which writes kube's 503.
func (a *Aggregator) Proxy(w http.ResponseWriter, r *http.Request, svc *apiregv1.APIService, u *auth.User, fail func(error)) error {
	if u == nil {
		return apierrors.NewInternalError(errMissingUser)
	}
	if !Available(svc) {
		return apierrors.NewServiceUnavailable("service unavailable")
	}
	cl, out, err := a.clients.Request(r.Context(), Target(svc), r.Method, "")
	if err != nil {
		return err
	}
	location := *out.URL
	location.Path, location.RawPath, location.RawQuery = r.URL.Path, r.URL.RawPath, r.URL.RawQuery
	ctx, cancel := r.Context(), context.CancelFunc(func() {})
	if strings.Count(strings.Trim(r.URL.Path, "/"), "/") == 2 { // /apis/<group>/<version>: discovery
		ctx, cancel = context.WithTimeout(ctx, discoveryTimeout)
	}
	defer cancel()
	req := r.WithContext(ctx)
	req.Header = r.Header.Clone()
	req.URL, req.Host = &location, location.Host
	// The user's credentials stay here: the aggregated server trusts the
	// front-proxy certificate and the headers.
	req.Header.Del("Authorization")
	for k := range req.Header {
		if strings.HasPrefix(k, "Impersonate-") {
			req.Header.Del(k)
		}
	}
	transport.SetAuthProxyHeaders(req, u.Name, u.UID, u.Groups, u.Extra)
	h := proxy.NewUpgradeAwareHandler(&location, cl.Transport, true, httpstream.IsUpgradeRequest(r), responder(fail))
	h.RejectForwardingRedirects = true
	h.ServeHTTP(w, req)
	return nil
}

// Available reports whether svc may be proxied to: kube proxies only
// while the Available condition is True; an APIService the available
// controller has not looked at yet (no condition) is tried as well.
func Available(svc *apiregv1.APIService) bool {
	for _, c := range svc.Status.Conditions {
		if c.Type == apiregv1.Available {
			return c.Status == apiregv1.ConditionTrue
		}
	}
	return true
}

// responder turns the upgrade-aware proxy's errors into fail.
type responder func(error)

func (f responder) Error(_ http.ResponseWriter, _ *http.Request, err error) {
	f(apierrors.NewServiceUnavailable(err.Error()))
}
