package controllers

import (
	"sync"

	"github.com/litek8s/litek8s/internal/kv"
)

// objRef names one object (one incarnation of a key): the unit of the
// garbage collector's work queues.
type objRef struct {
	Key kv.Key
	UID string
}

// node is one object in the graph.
type node struct {
	ref objRef
	objMeta
}

// work is what a change asks the garbage collector to do: objects to
// check for deletion (attemptToDelete) and owners whose dependents to
// orphan (attemptToOrphan).
type work struct {
	del, orphan []objRef
}

// graph is the garbage collector's view of ownership, as kube's
// GraphBuilder keeps it, but sparse: it has a node only for the objects
// the garbage collector must know, those with owners, being deleted, or
// that are the owners of a node; and for every owner uid (observed or
// not) the uids of its dependents. An object that is none of these (most
// objects: a ConfigMap nobody owns) costs it nothing. apply updates it
// from informer events and says what to do; the decisions themselves are
// taken on the live objects (gc.go).
//
// A dependent whose owner has no node makes the graph look the owner up
// in the store (lookup), where its own informer may not have shown it yet:
// found with the referenced uid, the owner gets its node; not found, the
// dependent is checked on the live objects, as kube checks an owner it has
// not observed (a virtual node) before deleting anything.
//
// Concurrency: mu guards everything below; the informers' goroutines call
// apply, the workers read. lookup is called with mu held and must not call
// back into the graph.
type graph struct {
	mu    sync.RWMutex
	nodes map[string]*node // by uid
	// dependents: owner uid → dependent uids. Kept for owners that are
	// gone or never observed: their dependents still reference them.
	dependents map[string]map[string]struct{}
	// lookup returns the live object that dependent dep's reference r
	// names, nil when there is none with r's uid (or it cannot be
	// resolved); nil lookup finds nothing.
	lookup func(dep objRef, r ownerRef) *kv.Object
	// quiet: apply returns no work (the initial lists, before scan).
	quiet bool
}

func newGraph(lookup func(dep objRef, r ownerRef) *kv.Object) *graph {
	return &graph{nodes: make(map[string]*node), dependents: make(map[string]map[string]struct{}),
		lookup: lookup, quiet: true}
}

// apply records ev and returns the work it calls for.
func (g *graph) apply(ev kv.Event) work {
	g.mu.Lock()
	defer g.mu.Unlock()
	var w work
	if ev.Type == kv.Deleted {
		g.remove(ev.Object.UID, &w)
	} else {
		g.upsert(ev.Object, &w)
	}
	if g.quiet {
		return work{}
	}
	return w
}

// needsNode: an object with this metadata has a node even when it owns
// nothing.
func (m objMeta) needsNode() bool { return len(m.owners) > 0 || m.deleting }

// upsert records an added or modified object. Caller must hold mu.
func (g *graph) upsert(obj *kv.Object, w *work) {
	ref, m := objRef{Key: obj.Key, UID: obj.UID}, parseMeta(obj.Raw)
	old := g.nodes[ref.UID]
	var was objMeta
	if old != nil {
		was = old.objMeta
	}
	if m.needsNode() || len(g.dependents[ref.UID]) > 0 {
		g.nodes[ref.UID] = &node{ref: ref, objMeta: m}
	} else if old != nil {
		delete(g.nodes, ref.UID)
	}
	check := false
	for _, r := range m.owners {
		if _, had := was.refTo(r.UID); !had {
			g.link(r.UID, ref.UID)
			if g.suspect(ref, r) {
				check = true
			}
		}
	}
	for _, r := range was.owners {
		nr, has := m.refTo(r.UID)
		if !has {
			g.unlink(r.UID, ref.UID)
		}
		// An owner waiting for its blocking dependents may be done now.
		if (!has || r.Block && !nr.Block) && g.waiting(r.UID) {
			w.del = append(w.del, g.nodes[r.UID].ref)
		}
	}
	if check {
		w.del = append(w.del, ref)
	}
	if m.deleting && m.orphan && !(was.deleting && was.orphan) {
		w.orphan = append(w.orphan, ref)
	}
	if m.deletingDependents() && !was.deletingDependents() {
		w.del = append(w.del, ref)
		w.del = g.appendDependents(w.del, ref.UID)
	}
}

// remove forgets a deleted object: its dependents are checked, and its
// owners waiting for it may be done. Caller must hold mu.
func (g *graph) remove(uid string, w *work) {
	if n := g.nodes[uid]; n != nil {
		delete(g.nodes, uid)
		for _, r := range n.owners {
			g.unlink(r.UID, uid)
			if g.waiting(r.UID) {
				w.del = append(w.del, g.nodes[r.UID].ref)
			}
		}
	}
	// An owner without a node of its own may have dependents.
	w.del = g.appendDependents(w.del, uid)
}

// scan returns the work the current state calls for and ends the quiet
// start: every dependent with a suspect reference, every owner being
// deleted in the foreground or with orphans.
func (g *graph) scan() work {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.quiet = false
	var w work
	// suspect may add owners' nodes: walk the nodes as they were.
	nodes := make([]*node, 0, len(g.nodes))
	for _, n := range g.nodes {
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		for _, r := range n.owners {
			if g.suspect(n.ref, r) {
				w.del = append(w.del, n.ref)
				break
			}
		}
		if n.deleting && n.orphan {
			w.orphan = append(w.orphan, n.ref)
		}
		if n.deletingDependents() {
			w.del = append(w.del, n.ref)
		}
	}
	return w
}

// suspect reports whether dep's reference r calls for a look at dep: its
// owner is not in the store (gone, or not visible yet), waits for its
// dependents, or is not the object the reference names (another name, or
// a namespaced owner in another namespace, which kube treats as absent).
// An owner found in the store gets its node. dep must already be linked
// to r's owner. Caller must hold mu.
func (g *graph) suspect(dep objRef, r ownerRef) bool {
	o := g.nodes[r.UID]
	if o == nil && g.lookup != nil {
		if obj := g.lookup(dep, r); obj != nil && obj.UID == r.UID {
			o = &node{ref: objRef{Key: obj.Key, UID: obj.UID}, objMeta: parseMeta(obj.Raw)}
			g.nodes[o.ref.UID] = o
		}
	}
	return o == nil || o.deletingDependents() || o.ref.Key.Name != r.Name ||
		o.ref.Key.Namespace != "" && o.ref.Key.Namespace != dep.Key.Namespace
}

func (g *graph) link(owner, dep string) {
	m := g.dependents[owner]
	if m == nil {
		m = make(map[string]struct{})
		g.dependents[owner] = m
	}
	m[dep] = struct{}{}
}

// unlink forgets that dep references owner; an owner left with no
// dependents loses its node unless it needs one of its own.
func (g *graph) unlink(owner, dep string) {
	if m := g.dependents[owner]; m != nil {
		delete(m, dep)
		if len(m) == 0 {
			delete(g.dependents, owner)
			if o := g.nodes[owner]; o != nil && !o.needsNode() {
				delete(g.nodes, owner)
			}
		}
	}
}

// waiting reports whether uid is an observed owner deleting its
// dependents in the foreground. Caller must hold mu.
func (g *graph) waiting(uid string) bool {
	o := g.nodes[uid]
	return o != nil && o.deletingDependents()
}

// appendDependents appends the observed dependents of owner. Caller must
// hold mu.
func (g *graph) appendDependents(out []objRef, owner string) []objRef {
	for d := range g.dependents[owner] {
		if n := g.nodes[d]; n != nil {
			out = append(out, n.ref)
		}
	}
	return out
}

// dependents of owner, as the graph knows them.
type dependent struct {
	ref objRef
	// block: its reference to the owner has blockOwnerDeletion.
	// deletingDependents: it is itself deleted in the foreground.
	block, deletingDependents bool
}

// dependentsOf returns the observed dependents of owner.
func (g *graph) dependentsOf(owner string) []dependent {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []dependent
	for d := range g.dependents[owner] {
		n := g.nodes[d]
		if n == nil {
			continue
		}
		r, _ := n.refTo(owner)
		out = append(out, dependent{ref: n.ref, block: r.Block, deletingDependents: n.deletingDependents()})
	}
	return out
}
