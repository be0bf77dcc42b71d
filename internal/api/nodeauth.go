package api

import (
	"context"
	"encoding/json"
	"net/url"
	"sync"
	"sync/atomic"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/litek8s/litek8s/internal/auth"
	"github.com/litek8s/litek8s/internal/kv"
)

// Node identity: the Node authorizer's graph (what pods bound to each
// node reference, and the objects that name a node), read from the store
// and rebuilt when one of its tables changed, and the bootstrap tokens'
// Secrets.

// nodeGraphCache holds the graph of the stored pods and claims.
type nodeGraphCache struct {
	cur atomic.Pointer[cachedNodeGraph]
	mu  sync.Mutex // one rebuild at a time
}

type cachedNodeGraph struct {
	revs  [len(nodeGraphKinds)]uint64
	graph *auth.NodeGraph
}

// nodeGraphKinds are the stored resources the graph is built from, in the
// order of cachedNodeGraph.revs and NewNodeGraph's inputs.
var nodeGraphKinds = [...]string{"pods", "persistentvolumeclaims", "volumeattachments.storage.k8s.io",
	"resourceslices.resource.k8s.io", "podcertificaterequests.certificates.k8s.io"}

// nodeGraph returns the Node authorizer's graph of what this member has
// applied.
func (s *Server) nodeGraph(ctx context.Context) (*auth.NodeGraph, error) {
	var lists [len(nodeGraphKinds)]*kv.List
	var revs [len(nodeGraphKinds)]uint64
	for i, k := range nodeGraphKinds {
		l, err := s.store.List(ctx, k, "", false)
		if err != nil {
			return nil, err
		}
		lists[i], revs[i] = l, l.ModRev
	}
	if c := s.nodeGraphs.cur.Load(); c != nil && c.revs == revs {
		return c.graph, nil
	}
	s.nodeGraphs.mu.Lock()
	defer s.nodeGraphs.mu.Unlock()
	if c := s.nodeGraphs.cur.Load(); c != nil && c.revs == revs {
		return c.graph, nil
	}
	g := auth.NewNodeGraph(auth.NodeObjects{Pods: decodeAll[corev1.Pod](s, lists[0]),
		Claims:            decodeAll[corev1.PersistentVolumeClaim](s, lists[1]),
		VolumeAttachments: decodeAll[storagev1.VolumeAttachment](s, lists[2]),
		ResourceSlices:    decodeAll[resourcev1.ResourceSlice](s, lists[3]),
		PodCertificates:   decodeAll[certificatesv1.PodCertificateRequest](s, lists[4])})
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
