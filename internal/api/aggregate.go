package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/litek8s/litek8s/internal/api/aggregator"
	"github.com/litek8s/litek8s/internal/auth"
)

// aggregated routes /apis/{group}/{version}[/…] to the aggregated API
// server of an APIService when this member does not serve the
// group/version itself (internal/api/aggregator); the rest goes to next.
// Built-in group/versions cost one map lookup.
func (s *Server) aggregated(next http.Handler) http.Handler {
	if s.cfg.Aggregator == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gv := r.PathValue("group") + "/" + r.PathValue("version")
		if s.registry().ServesGroupVersion(gv) {
			next.ServeHTTP(w, r)
			return
		}
		svc, err := s.cfg.Aggregator.Lookup(r.Context(), gv)
		if errors.Is(err, aggregator.ErrNotAggregated) {
			next.ServeHTTP(w, r)
			return
		}
		if err == nil {
			err = s.authorizeAggregated(r, gv)
		}
		if err == nil {
			err = s.cfg.Aggregator.Proxy(w, r, svc, auth.UserFrom(r.Context()), func(err error) { s.writeError(w, r, err) })
		}
		if err != nil {
			s.writeError(w, r, err)
		}
	})
}

// authorizeAggregated authorizes a resource request under an aggregated
// group/version as kube-apiserver does before proxying it (discovery,
// /apis/{group}/{version}, was authorized as a non-resource path).
func (s *Server) authorizeAggregated(r *http.Request, gv string) error {
	rest, ok := strings.CutPrefix(r.URL.Path, "/apis/"+gv+"/")
	if !ok || rest == "" {
		return nil
	}
	u := auth.UserFrom(r.Context())
	if u != nil && u.InGroup(auth.GroupMasters) {
		return nil
	}
	segs := strings.Split(strings.TrimSuffix(rest, "/"), "/")
	a := auth.Attributes{User: u, ResourceRequest: true, APIGroup: r.PathValue("group")}
	if len(segs) >= 3 && segs[0] == "namespaces" {
		a.Namespace, segs = segs[1], segs[2:]
	}
	a.Resource = segs[0]
	if len(segs) > 1 {
		a.Name = segs[1]
	}
	if len(segs) > 2 {
		a.Subresource = segs[2]
	}
	a.Verb = authzVerb(r, &request{collection: a.Name == ""})
	return s.check(r.Context(), a)
}
