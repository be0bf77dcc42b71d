package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/litek8s/litek8s/internal/auth"
	"github.com/litek8s/litek8s/internal/kv"
)

// Who may do what (package auth): every request is authenticated, then
// authorized with RBAC. Paths outside the resource tree (discovery,
// OpenAPI, /metrics, /admin/) are authorized here as non-resource URLs;
// resource requests once they are parsed (authorize). /internal/ is
// between members, which authenticate with their certificates there;
// the public paths (health, /version) are served to anyone.

// publicPaths are served to anyone, without authorization.
var publicPaths = []string{"/healthz", "/livez", "/readyz", "/version"}

func isPublic(path string) bool {
	for _, p := range publicPaths {
		if path == p {
			return true
		}
	}
	return false
}

// authenticate finds the request's user (401 when its credentials prove
// nothing), applies impersonation, and authorizes non-resource requests.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/internal/") {
			next.ServeHTTP(w, r)
			return
		}
		u, err := s.authn.Authenticate(r.Context(), r)
		if err != nil {
			if s.cfg.Audit != nil {
				s.auditUnauthenticated(r) // audit.go
			}
			s.writeError(w, r, errUnauthorized)
			return
		}
		if s.cfg.Audit != nil { // audit.go
			var end func()
			if w, r, end = s.auditBegin(w, r, u); end != nil {
				defer end()
			}
		}
		authed := u
		if r.Header.Get("Impersonate-User") != "" || r.Header.Get("Impersonate-Group") != "" || r.Header.Get("Impersonate-Uid") != "" {
			if u, err = s.impersonate(r.Context(), u, r.Header); err != nil {
				s.writeError(w, r, err)
				return
			}
		}
		if s.cfg.Audit != nil && u != authed {
			auditImpersonated(r.Context(), u)
		}
		r = r.WithContext(auth.WithUser(r.Context(), u))
		if !isPublic(r.URL.Path) && !isResourcePath(r.URL.Path) {
			a := auth.Attributes{User: u, Verb: nonResourceVerb(r.Method), Path: r.URL.Path}
			if err := s.check(r.Context(), a); err != nil {
				s.writeError(w, r, err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// isResourcePath tells /api/v1/<resource>… and /apis/<group>/<version>/<resource>…
// from discovery and the other paths.
func isResourcePath(p string) bool {
	if rest, ok := strings.CutPrefix(p, "/api/v1/"); ok {
		return rest != ""
	}
	if rest, ok := strings.CutPrefix(p, "/apis/"); ok {
		segs := strings.SplitN(rest, "/", 4)
		return len(segs) >= 3 && segs[0] != "" && segs[1] != "" && segs[2] != ""
	}
	return false
}

// nonResourceVerb is the verb of a non-resource request (kube's).
func nonResourceVerb(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead:
		return "get"
	case http.MethodPost:
		return "post"
	case http.MethodPut:
		return "put"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return strings.ToLower(method)
}

// authzVerb is the verb RBAC sees for a resource request (kube's RequestInfo).
func authzVerb(r *http.Request, q *request) string {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case isWatch(r):
			return "watch"
		case q.collection:
			return "list"
		}
		return "get"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if q.collection {
			return "deletecollection"
		}
		return "delete"
	}
	return strings.ToLower(r.Method)
}

// authorize checks a parsed resource request.
func (s *Server) authorize(r *http.Request, q *request) error {
	u := auth.UserFrom(r.Context())
	if u != nil && u.InGroup(auth.GroupMasters) {
		if s.cfg.Audit != nil {
			auditDecision(r.Context(), true, "")
		}
		return nil // the common case costs nothing more
	}
	a := auth.Attributes{User: u, Verb: authzVerb(r, q), ResourceRequest: true,
		APIGroup: q.res.Group, Resource: q.res.Resource, Subresource: q.subresource, Namespace: q.namespace, Name: q.name}
	if a.Verb == "list" || a.Verb == "watch" || a.Verb == "deletecollection" {
		var name string
		a.FieldSelector, name = selectorAttributes(r.URL.Query())
		if a.Name == "" {
			a.Name = name
		}
	}
	return s.check(r.Context(), a)
}

// check returns kube's 403 unless the Node authorizer or RBAC allows a.
func (s *Server) check(ctx context.Context, a auth.Attributes) error {
	d, err := s.authz.Authorize(ctx, a)
	if err != nil {
		return err
	}
	if s.cfg.Audit != nil {
		auditDecision(ctx, d.Allowed, d.Reason)
	}
	if !d.Allowed {
		return auth.ForbiddenBecause(a, d.Reason)
	}
	return nil
}

// impersonate applies kube's Impersonate-User, -Group and -Uid headers:
// the requester needs the impersonate verb on each.
func (s *Server) impersonate(ctx context.Context, u *auth.User, h http.Header) (*auth.User, error) {
	name := h.Get("Impersonate-User")
	if name == "" {
		return nil, badRequest("requested impersonation without Impersonate-User")
	}
	a := auth.Attributes{User: u, Verb: "impersonate", ResourceRequest: true, Resource: "users", Name: name}
	if rest, ok := strings.CutPrefix(name, "system:serviceaccount:"); ok {
		if ns, sa, ok := strings.Cut(rest, ":"); ok {
			a.Resource, a.Namespace, a.Name = "serviceaccounts", ns, sa
		}
	}
	if err := s.check(ctx, a); err != nil {
		return nil, err
	}
	out := &auth.User{Name: name}
	for _, g := range h.Values("Impersonate-Group") {
		if err := s.check(ctx, auth.Attributes{User: u, Verb: "impersonate", ResourceRequest: true, Resource: "groups", Name: g}); err != nil {
			return nil, err
		}
		out.Groups = append(out.Groups, g)
	}
	if uid := h.Get("Impersonate-Uid"); uid != "" {
		if err := s.check(ctx, auth.Attributes{User: u, Verb: "impersonate", ResourceRequest: true,
			APIGroup: "authentication.k8s.io", Resource: "uids", Name: uid}); err != nil {
			return nil, err
		}
		out.UID = uid
	}
	if a.Resource == "serviceaccounts" {
		out.Groups = append(out.Groups, auth.GroupServiceAccounts, auth.GroupServiceAccounts+":"+a.Namespace)
	}
	if name != auth.Anonymous {
		out.Groups = append(out.Groups, auth.GroupAuthenticated)
	} else {
		out.Groups = append(out.Groups, auth.GroupUnauthenticated)
	}
	return out, nil
}

// policyCache holds the RBAC policy of the stored objects, rebuilt when
// one of their tables changed.
type policyCache struct {
	cur atomic.Pointer[cachedPolicy]
	mu  sync.Mutex // one rebuild at a time
}

type cachedPolicy struct {
	revs   [4]uint64
	policy *auth.Policy
}

// rbacStoreKinds are the RBAC resources, in the order of cachedPolicy.revs.
var rbacStoreKinds = [4]string{"clusterroles", "roles", "clusterrolebindings", "rolebindings"}

// policy returns the RBAC policy of what this member has applied.
func (s *Server) policy(ctx context.Context) (*auth.Policy, error) {
	var lists [4]*kv.List
	var revs [4]uint64
	reg := s.registry()
	for i, k := range rbacStoreKinds {
		res := reg.Lookup("rbac.authorization.k8s.io/v1", k)
		if res == nil {
			return nil, errors.New("api: RBAC kinds not registered")
		}
		l, err := s.store.List(ctx, res.StoreKey(), "", false)
		if err != nil {
			return nil, err
		}
		lists[i], revs[i] = l, l.ModRev
	}
	if c := s.policies.cur.Load(); c != nil && c.revs == revs {
		return c.policy, nil
	}
	s.policies.mu.Lock()
	defer s.policies.mu.Unlock()
	if c := s.policies.cur.Load(); c != nil && c.revs == revs {
		return c.policy, nil
	}
	p := auth.NewPolicy(decodeAll[rbacv1.ClusterRole](s, lists[0]), decodeAll[rbacv1.Role](s, lists[1]),
		decodeAll[rbacv1.ClusterRoleBinding](s, lists[2]), decodeAll[rbacv1.RoleBinding](s, lists[3]))
	s.policies.cur.Store(&cachedPolicy{revs: revs, policy: p})
	return p, nil
}

// decodeAll decodes every object of l (one that does not decode is logged
// and grants nothing).
func decodeAll[T any](s *Server, l *kv.List) []*T {
	var out []*T
	l.Range("", func(obj *kv.Object) bool {
		v := new(T)
		if err := json.Unmarshal(obj.Raw, v); err != nil {
			s.log.Error("stored object does not decode", "key", obj.Key, "err", err)
			return true
		}
		out = append(out, v)
		return true
	})
	return out
}
