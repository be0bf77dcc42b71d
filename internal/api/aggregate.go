package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/litek8s/litek8s/internal/api/aggregator"
	"github.com/litek8s/litek8s/internal/api/discovery"
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

// aggDiscovery is the aggregated servers' discovery the current schemas
// were built with (generation gen of Aggregator.Discovery).
type aggDiscovery struct {
	gen  uint64
	rows []discovery.Resource
}

// refreshAggregated rebuilds discovery when the aggregated servers'
// documents changed (discovery requests only).
func (s *Server) refreshAggregated(ctx context.Context) {
	if s.cfg.Aggregator == nil {
		return
	}
	gen, items, err := s.cfg.Aggregator.Discovery(ctx)
	if err != nil || s.aggDisco.Load().gen == gen {
		return
	}
	s.crdMu.Lock()
	defer s.crdMu.Unlock()
	if s.aggDisco.Load().gen == gen {
		return
	}
	reg := s.registry()
	var rows []discovery.Resource
	for _, gvr := range items {
		if reg.ServesGroupVersion(schema.GroupVersion{Group: gvr.Group, Version: gvr.Version}.String()) {
			continue // served here: routing never reaches the aggregated server either
		}
		rows = append(rows, aggregatedRows(gvr)...)
	}
	prev := s.aggDisco.Swap(&aggDiscovery{gen: gen, rows: rows})
	if err := s.setRegistry(reg); err != nil {
		s.log.Error("serving aggregated discovery", "err", err)
		s.aggDisco.Store(prev)
	}
}

// aggregatedRows turns an aggregated server's APIResourceList into
// discovery rows (its "<resource>/<sub>" entries become subresources).
func aggregatedRows(gvr aggregator.GroupVersionResources) []discovery.Resource {
	var rows []discovery.Resource
	subs := map[string][]discovery.Subresource{}
	for _, r := range gvr.Resources {
		if parent, sub, ok := strings.Cut(r.Name, "/"); ok {
			subs[parent] = append(subs[parent], discovery.Subresource{Name: sub, Group: r.Group, Version: r.Version,
				Kind: r.Kind, Verbs: r.Verbs})
			continue
		}
		if r.Kind == "" || r.Name == "" {
			continue
		}
		rows = append(rows, discovery.Resource{Group: gvr.Group, Version: gvr.Version, Resource: r.Name,
			Singular: r.SingularName, Kind: r.Kind, Namespaced: r.Namespaced, ShortNames: r.ShortNames,
			Categories: r.Categories, Verbs: r.Verbs, KeepVerbOrder: true})
	}
	for i := range rows {
		rows[i].Subresources = subs[rows[i].Resource]
	}
	return rows
}

// ServedGroupVersions lists the group/versions this API serves itself,
// each with whether it is built in (false: from a CRD): the Local
// APIServices.
func (s *Server) ServedGroupVersions(ctx context.Context) map[schema.GroupVersion]bool {
	out := map[schema.GroupVersion]bool{}
	for _, r := range s.refreshCRDs(ctx).All() {
		gv := schema.GroupVersion{Group: r.Group, Version: r.Version}
		out[gv] = out[gv] || !r.Custom
	}
	return out
}
