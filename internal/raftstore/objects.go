package raftstore

import (
	"strings"
	"sync"

	"github.com/google/btree"

	"github.com/litek8s/litek8s/internal/kv"
)

// btreeDegree is a middle-of-the-road B-tree fan-out: nodes of ~64 pointers
// keep iteration cache-friendly and copy-on-write after a Clone cheap.
const btreeDegree = 32

func lessObject(a, b *kv.Object) bool {
	if a.Key.Namespace != b.Key.Namespace {
		return a.Key.Namespace < b.Key.Namespace
	}
	return a.Key.Name < b.Key.Name
}

// table holds the objects of one resource ordered by (namespace, name).
type table struct {
	// name is the resource: objects' keys share this string.
	name string
	tree *btree.BTreeG[*kv.Object]
	// view is an immutable clone of tree shared by readers; nil after a
	// write until a reader asks again.
	view *view
	// modRev is the revision of the last change to the table.
	modRev uint64
	// past are earlier views that readers took, newest last, each with the
	// revisions it was the state of: paginated lists continue from them.
	past []pastView
}

// pastView is a view of a table that was current for revisions [from, to).
type pastView struct {
	view     *view
	from, to uint64
}

// view is an immutable tree of one resource and the object counts of its
// namespaces, counted once on demand (a paginated list's remainingItemCount
// then costs nothing on its later pages).
type view struct {
	tree *btree.BTreeG[*kv.Object]

	mu     sync.Mutex     // guards counts
	counts map[string]int // by namespace
}

func newView(tree *btree.BTreeG[*kv.Object]) *view { return &view{tree: tree} }

// count returns the number of objects in namespace (all when empty).
func (v *view) count(namespace string) int {
	if namespace == "" {
		return v.tree.Len()
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if n, ok := v.counts[namespace]; ok {
		return n
	}
	n := 0
	ascend(v.tree, namespace, "", func(*kv.Object) bool { n++; return true })
	if v.counts == nil {
		v.counts = make(map[string]int)
	}
	v.counts[namespace] = n
	return n
}

// list is the kv.List of namespace in v at rev.
func (v *view) list(namespace string, rev, modRev uint64) *List {
	return &List{Rev: rev, ModRev: modRev, Source: v, Namespace: namespace}
}

// Each implements kv.ListSource.
func (v *view) Each(namespace, after string, fn func(*kv.Object) bool) {
	ascend(v.tree, namespace, after, fn)
}

// Count implements kv.ListSource.
func (v *view) Count(namespace string) int { return v.count(namespace) }

// maxPastViews bounds the earlier views kept per resource. A view shares
// all unchanged B-tree nodes with its successors, so keeping one costs
// only what changed since.
const maxPastViews = 16

// retire moves the current view (if a reader took one) into past before
// the change at rev. Caller must hold the FSM's mu.
func (t *table) retire(rev uint64) {
	if t.view == nil {
		return
	}
	if len(t.past) == maxPastViews {
		t.past = append(t.past[:0], t.past[1:]...)
	}
	t.past = append(t.past, pastView{view: t.view, from: t.modRev, to: rev})
	t.view = nil
}

func newTable(name string) *table {
	return &table{name: name, tree: btree.NewG(btreeDegree, lessObject)}
}

// resourceName returns the string of resource its table holds (resource
// itself for a new one).
func (o *objects) resourceName(resource string) string {
	if t := o.tables[resource]; t != nil {
		return t.name
	}
	return resource
}

// objects is the whole in-memory store: one table per resource. It is not
// safe for concurrent use on its own; the FSM's mutex guards it.
type objects struct {
	tables map[string]*table
	// restoredAt is the index of the snapshot the objects were restored
	// from: changes at or before it left no trace, so every resource (even
	// one without objects) counts as changed there.
	restoredAt uint64
}

func newObjects() *objects { return &objects{tables: make(map[string]*table)} }

func (o *objects) get(k kv.Key) *kv.Object {
	t := o.tables[k.Resource]
	if t == nil {
		return nil
	}
	obj, _ := t.tree.Get(&kv.Object{Key: k})
	return obj
}

func (o *objects) put(obj *kv.Object) {
	t := o.tables[obj.Key.Resource]
	if t == nil {
		t = newTable(obj.Key.Resource)
		o.tables[obj.Key.Resource] = t
	}
	t.retire(obj.RV)
	t.tree.ReplaceOrInsert(obj)
	t.modRev = max(t.modRev, obj.RV)
}

func (o *objects) remove(k kv.Key, rev uint64) {
	if t := o.tables[k.Resource]; t != nil {
		t.retire(rev)
		t.tree.Delete(&kv.Object{Key: k})
		t.modRev = max(t.modRev, rev)
	}
}

// viewAt returns a view of resource as it was at revision rev: the
// current one when nothing changed since, else a past view readers took
// that was current then; nil when none is kept.
func (o *objects) viewAt(resource string, rev uint64) *view {
	if o.modRev(resource) <= rev {
		if v := o.viewOf(resource); v != nil {
			return v
		}
		return newView(btree.NewG(btreeDegree, lessObject)) // no objects yet
	}
	if t := o.tables[resource]; t != nil && rev >= o.restoredAt {
		for _, p := range t.past {
			if p.from <= rev && rev < p.to {
				return p.view
			}
		}
	}
	return nil
}

// modRev returns the revision of the last change to resource.
func (o *objects) modRev(resource string) uint64 {
	if t := o.tables[resource]; t != nil {
		return max(t.modRev, o.restoredAt)
	}
	return o.restoredAt
}

// viewOf returns an immutable tree of resource that may be read without a
// lock while the store keeps changing. Caller must hold the write lock when
// view is nil (Clone marks the original for copy-on-write).
func (o *objects) viewOf(resource string) *view {
	t := o.tables[resource]
	if t == nil {
		return nil
	}
	if t.view == nil {
		t.view = newView(t.tree.Clone())
	}
	return t.view
}

// count returns the number of objects of all resources.
func (o *objects) count() int {
	n := 0
	for _, t := range o.tables {
		n += t.tree.Len()
	}
	return n
}

// ascend calls fn for the objects of tree in key order within namespace
// (all namespaces when namespace is empty), starting after the object named
// after (for all namespaces: "namespace/name"; for a cluster-scoped
// resource: the name), until fn returns false.
func ascend(tree *btree.BTreeG[*kv.Object], namespace, after string, fn func(*kv.Object) bool) {
	if tree == nil {
		return
	}
	if namespace == "" && after == "" {
		tree.Ascend(fn)
		return
	}
	start := kv.Key{Namespace: namespace, Name: after}
	if ns, name, ok := strings.Cut(after, "/"); ok && namespace == "" {
		start.Namespace, start.Name = ns, name // else cluster-scoped: after is a name
	}
	tree.AscendGreaterOrEqual(&kv.Object{Key: start}, func(obj *kv.Object) bool {
		if namespace != "" && obj.Key.Namespace != namespace {
			return false
		}
		if after != "" && obj.Key.Namespace == start.Namespace && obj.Key.Name == start.Name {
			return true // strictly after
		}
		return fn(obj)
	})
}
