package api

import (
	"context"
	"encoding/json"
	"net/url"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/litek8s/litek8s/internal/auth"
	"github.com/litek8s/litek8s/internal/kv"
)

// Node identity: the Node authorizer's graph (what pods bound to each
// node reference), read from the stored pods and claims and rebuilt when
// one of their tables changed, and the bootstrap tokens' Secrets.

// nodeGraphCache holds the graph of the stored pods and claims.
type nodeGraphCache struct {
	cur atomic.Pointer[cachedNodeGraph]
	mu  sync.Mutex // one rebuild at a time
}

type cachedNodeGraph struct {
	revs  [2]uint64 // pods, persistentvolumeclaims
	graph *auth.NodeGraph
}

// nodeGraph returns the Node authorizer's graph of what this member has
// applied.
func (s *Server) nodeGraph(ctx context.Context) (*auth.NodeGraph, error) {
	pods, err := s.store.List(ctx, "pods", "", false)
	if err != nil {
		return nil, err
	}
	pvcs, err := s.store.List(ctx, "persistentvolumeclaims", "", false)
	if err != nil {
		return nil, err
	}
	revs := [2]uint64{pods.ModRev, pvcs.ModRev}
	if c := s.nodeGraphs.cur.Load(); c != nil && c.revs == revs {
		return c.graph, nil
	}
	s.nodeGraphs.mu.Lock()
	defer s.nodeGraphs.mu.Unlock()
	if c := s.nodeGraphs.cur.Load(); c != nil && c.revs == revs {
		return c.graph, nil
	}
	g := auth.NewNodeGraph(decodeAll[corev1.Pod](s, pods), decodeAll[corev1.PersistentVolumeClaim](s, pvcs))
	s.nodeGraphs.cur.Store(&cachedNodeGraph{revs: revs, graph: g})
	return g, nil
}

// bootstrapSecret returns Secret kube-system/name (a bootstrap token's).
func (s *Server) bootstrapSecret(ctx context.Context, name string) (*corev1.Secret, error) {
	obj, _, err := s.store.Get(ctx, kv.Key{Resource: "secrets", Namespace: "kube-system", Name: name}, false)
	if err != nil {
		return nil, err
	}
	sec := &corev1.Secret{}
	if err := json.Unmarshal(obj.Raw, sec); err != nil {
		return nil, err
	}
	return sec, nil
}

// selectorAttributes returns the field selector of a list or watch as
// the authorizers see it, and the name a metadata.name selector picks
// (kube's RequestInfo makes it the request's name). A selector that does
// not parse gives none: the list itself answers it with 400.
func selectorAttributes(query url.Values) (fields.Requirements, string) {
	fs := query.Get("fieldSelector")
	if fs == "" {
		return nil, ""
	}
	sel, err := fields.ParseSelector(fs)
	if err != nil {
		return nil, ""
	}
	reqs := sel.Requirements()
	name, _ := sel.RequiresExactMatch("metadata.name")
	return reqs, name
}
