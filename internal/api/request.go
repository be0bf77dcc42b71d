package api

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
)

// request is a parsed resource request.
type request struct {
	res                          *registry.Resource
	namespace, name, subresource string
	collection                   bool // no name: list, watch, create
	// proxyPath is the path after …/{name}/proxy (connect.go).
	proxyPath string
}

func (q *request) key() kv.Key {
	return kv.Key{Resource: q.res.StoreKey(), Namespace: q.namespace, Name: q.name}
}

// parseRequest resolves /api/v1/… and /apis/{group}/{version}/… paths.
func (s *Server) parseRequest(r *http.Request) (*request, error) {
	gv, rest := "v1", strings.TrimPrefix(r.URL.Path, "/api/v1/")
	if g := r.PathValue("group"); g != "" {
		v := r.PathValue("version")
		gv = g + "/" + v
		rest = strings.TrimPrefix(r.URL.Path, "/apis/"+g+"/"+v+"/")
	}
	segs := strings.Split(strings.TrimSuffix(rest, "/"), "/")
	q := &request{}
	if len(segs) >= 3 && segs[0] == "namespaces" && !isNamespaceSubresource(segs) {
		q.namespace, segs = segs[1], segs[2:]
	}
	if len(segs) > 3 && segs[2] == "proxy" { // …/{name}/proxy/{path…}
		q.proxyPath = "/" + strings.Join(segs[3:], "/")
		if strings.HasSuffix(rest, "/") {
			q.proxyPath += "/"
		}
		segs = segs[:3]
	}
	if len(segs) == 0 || len(segs) > 3 || segs[0] == "" {
		return nil, errNotFoundResource
	}
	q.res = s.registry().Lookup(gv, segs[0])
	if q.res == nil || q.res.Custom { // unknown, or a custom resource: are CRDs current?
		q.res = s.refreshCRDs(r.Context()).Lookup(gv, segs[0])
	}
	if q.res == nil {
		return nil, errNotFoundResource
	}
	switch len(segs) {
	case 1:
		q.collection = true
	case 2:
		q.name = segs[1]
	case 3:
		q.name, q.subresource = segs[1], segs[2]
	}
	if q.namespace != "" && !q.res.Namespaced {
		return nil, errNotFoundResource
	}
	if q.name == "" && !q.collection {
		return nil, errNotFoundResource
	}
	return q, nil
}

// isNamespaceSubresource tells /api/v1/namespaces/{name}/{sub} (a
// namespace's own subresource) from a namespaced collection.
func isNamespaceSubresource(segs []string) bool {
	return len(segs) == 3 && (segs[2] == "status" || segs[2] == "finalize")
}

// serveResource dispatches a resource request by method.
func (s *Server) serveResource(w http.ResponseWriter, r *http.Request) error {
	q, err := s.parseRequest(r)
	if err != nil {
		return err
	}
	if err := s.authorize(r, q); err != nil {
		return err
	}
	watch := isWatch(r)
	s.observe(w, r, q, watch)
	if q.res.Deprecation != "" {
		w.Header().Add("Warning", fmt.Sprintf("299 - %q", q.res.Deprecation))
	}
	if q.subresource != "" {
		return s.serveSubresource(w, r, q)
	}
	if q.res.Review {
		if r.Method != http.MethodPost || !q.collection {
			return errMethodNotAllowed
		}
		return s.serveReview(w, r, q)
	}
	switch {
	case r.Method == http.MethodGet && q.collection && watch:
		return s.watch(w, r, q)
	case r.Method == http.MethodGet && q.collection:
		return s.list(w, r, q)
	case r.Method == http.MethodGet:
		return s.get(w, r, q)
	case r.Method == http.MethodPost && q.collection:
		return s.create(w, r, q)
	case r.Method == http.MethodPut && !q.collection:
		return s.update(w, r, q)
	case r.Method == http.MethodPatch && !q.collection:
		return s.patch(w, r, q)
	case r.Method == http.MethodDelete && !q.collection:
		return s.delete(w, r, q)
	case r.Method == http.MethodDelete && serves(q.res, "deletecollection"):
		return s.deleteCollection(w, r, q)
	}
	return errMethodNotAllowed
}

// isWatch tells a watch request (?watch=true or 1) without parsing the
// query of the others.
func isWatch(r *http.Request) bool {
	if r.Method != http.MethodGet || !strings.Contains(r.URL.RawQuery, "watch") {
		return false
	}
	v := r.URL.Query().Get("watch")
	return v == "true" || v == "1"
}

// serveSubresource dispatches status, scale, binding and a namespace's
// finalize.
func (s *Server) serveSubresource(w http.ResponseWriter, r *http.Request, q *request) error {
	res := q.res
	switch {
	case q.subresource == "status" && res.Status:
		switch r.Method {
		case http.MethodGet:
			return s.get(w, r, q)
		case http.MethodPut:
			return s.update(w, r, q)
		case http.MethodPatch:
			return s.patch(w, r, q)
		}
	case q.subresource == "scale" && res.Scale != nil:
		switch r.Method {
		case http.MethodGet:
			return s.getScale(w, r, q)
		case http.MethodPut:
			return s.updateScale(w, r, q)
		case http.MethodPatch:
			return s.patch(w, r, q)
		}
	case q.subresource == "binding" && res.Binding:
		if r.Method == http.MethodPost {
			return s.bind(w, r, q)
		}
	case q.subresource == "token" && res.TokenRequest:
		if r.Method == http.MethodPost {
			return s.requestToken(w, r, q)
		}
	case q.subresource == "approval" && res.Approval:
		switch r.Method {
		case http.MethodGet:
			return s.get(w, r, q)
		case http.MethodPut:
			return s.update(w, r, q)
		case http.MethodPatch:
			return s.patch(w, r, q)
		}
	case q.subresource == "finalize" && res.StoreKey() == "namespaces":
		if r.Method == http.MethodPut {
			return s.finalize(w, r, q)
		}
	case isConnect(res, q.subresource):
		return s.connect(w, r, q)
	case (q.subresource == "ephemeralcontainers" || q.subresource == "resize") && res.PodSubresources:
		switch r.Method {
		case http.MethodGet:
			return s.get(w, r, q)
		case http.MethodPut:
			return s.update(w, r, q)
		case http.MethodPatch:
			return s.patch(w, r, q)
		}
	case q.subresource == "eviction" && res.Eviction:
		if r.Method == http.MethodPost {
			return s.evict(w, r, q)
		}
	default:
		return errNotFoundResource
	}
	return errMethodNotAllowed
}

// serves reports whether verb is served on r.
func serves(r *registry.Resource, verb string) bool {
	for _, v := range r.ServedVerbs() {
		if v == verb {
			return true
		}
	}
	return false
}
