package controllers

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/litek8s/litek8s/internal/kv"
)

func TestParseMeta(t *testing.T) {
	raw := `{"metadata":{"name":"a","ownerReferences":[` + refJSON("apps/v1", "ReplicaSet", "rs", "u1", true) + `,` +
		`{"apiVersion":"v1","kind":"ConfigMap","name":"cm","uid":"u2"}],` +
		`"deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":["x","foregroundDeletion"]},"spec":{"finalizers":["orphan"]}}`
	m := parseMeta([]byte(raw))
	want := []ownerRef{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u1", Block: true},
		{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "u2"}}
	if !slices.Equal(m.owners, want) || !m.deleting || !m.foreground || m.orphan {
		t.Errorf("parseMeta = %+v", m)
	}
	if gk := m.owners[0].groupKind(); gk != (schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}) {
		t.Errorf("group kind %v", gk)
	}
	if gk := m.owners[1].groupKind(); gk != (schema.GroupKind{Kind: "ConfigMap"}) {
		t.Errorf("group kind %v", gk)
	}
	if m := parseMeta([]byte(`{"metadata":{"deletionTimestamp":null,"finalizers":["orphan"]}}`)); m.deleting || !m.orphan {
		t.Errorf("null deletionTimestamp: %+v", m)
	}
}

func TestDecide(t *testing.T) {
	a, b := ownerRef{UID: "a", Block: true}, ownerRef{UID: "b"}
	bg, fg, or := metav1.DeletePropagationBackground, metav1.DeletePropagationForeground, metav1.DeletePropagationOrphan
	for _, tc := range []struct {
		name             string
		m                objMeta
		states           []ownerState
		hasDeps, depsDel bool
		want             action
	}{
		{"no owners", objMeta{}, nil, false, false, action{}},
		{"solid owner", objMeta{owners: []ownerRef{a}}, []ownerState{ownerSolid}, false, false, action{}},
		{"owner being deleted in the background is solid", objMeta{owners: []ownerRef{a}}, []ownerState{ownerSolid}, true, false, action{}},
		{"dangling", objMeta{owners: []ownerRef{a}}, []ownerState{ownerDangling}, false, false,
			action{Kind: actDelete, Policy: bg}},
		{"dangling, with dependents: still background", objMeta{owners: []ownerRef{a}}, []ownerState{ownerDangling}, true, false,
			action{Kind: actDelete, Policy: bg}},
		{"all dangling", objMeta{owners: []ownerRef{a, b}}, []ownerState{ownerDangling, ownerDangling}, false, false,
			action{Kind: actDelete, Policy: bg}},
		{"its own orphan finalizer", objMeta{owners: []ownerRef{a}, orphan: true}, []ownerState{ownerDangling}, false, false,
			action{Kind: actDelete, Policy: or}},
		{"its own foreground finalizer", objMeta{owners: []ownerRef{a}, foreground: true}, []ownerState{ownerDangling}, false, false,
			action{Kind: actDelete, Policy: fg}},
		{"one solid, one dangling: the reference goes", objMeta{owners: []ownerRef{a, b}}, []ownerState{ownerDangling, ownerSolid}, false, false,
			action{Kind: actRemoveRefs, Owners: []string{"a"}}},
		{"one solid, one waiting: the reference goes", objMeta{owners: []ownerRef{a, b}}, []ownerState{ownerSolid, ownerWaiting}, true, false,
			action{Kind: actRemoveRefs, Owners: []string{"b"}}},
		{"waiting owner, no dependents", objMeta{owners: []ownerRef{a}}, []ownerState{ownerWaiting}, false, false,
			action{Kind: actDelete, Policy: bg}},
		{"waiting owner, dependents: foreground", objMeta{owners: []ownerRef{a}}, []ownerState{ownerWaiting}, true, false,
			action{Kind: actDelete, Policy: fg}},
		{"waiting and dangling, dependents: foreground", objMeta{owners: []ownerRef{a, b}}, []ownerState{ownerWaiting, ownerDangling}, true, false,
			action{Kind: actDelete, Policy: fg}},
		{"cycle: a dependent deletes in the foreground too", objMeta{owners: []ownerRef{a, b}}, []ownerState{ownerWaiting, ownerWaiting}, true, true,
			action{Kind: actDelete, Policy: fg, Unblock: []string{"a"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := decide(tc.m, tc.states, tc.hasDeps, tc.depsDel)
			if got.Kind != tc.want.Kind || got.Policy != tc.want.Policy || !slices.Equal(got.Owners, tc.want.Owners) ||
				!slices.Equal(got.Unblock, tc.want.Unblock) {
				t.Errorf("decide = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// graphEvent builds an event for the graph tests.
func graphEvent(typ kv.EventType, name, uid, meta string) kv.Event {
	s := newFakeStore()
	return kv.Event{Type: typ, Object: s.put("configmaps", "ns", name, uid, meta)}
}

func names(refs []objRef) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.Key.Name)
	}
	slices.Sort(out)
	return out
}

// liveGraph returns a graph whose lookup finds the objects of the events
// given to apply (the store applies a change before any informer hands it
// over), by name; unseen (graph events the store has but no informer gave
// the graph yet) are found too.
func liveGraph(unseen ...*kv.Object) (*graph, func(kv.Event) work) {
	live := make(map[string]*kv.Object)
	for _, o := range unseen {
		live[o.Key.Name] = o
	}
	g := newGraph(func(_ objRef, r ownerRef) *kv.Object {
		if o := live[r.Name]; o != nil && o.UID == r.UID {
			return o
		}
		return nil
	})
	return g, func(ev kv.Event) work {
		if ev.Type == kv.Deleted {
			delete(live, ev.Object.Key.Name)
		} else {
			live[ev.Object.Key.Name] = ev.Object
		}
		return g.apply(ev)
	}
}

func TestGraph(t *testing.T) {
	g, apply := liveGraph()
	ownerRef := func(name, uid string, block bool) string { return refJSON("v1", "ConfigMap", name, uid, block) }
	// Quiet start: the initial lists call for nothing until scan.
	for _, ev := range []kv.Event{
		graphEvent(kv.Added, "dep-of-ghost", "d0", owners(ownerRef("ghost", "g", true))),
		graphEvent(kv.Added, "owner", "o", ""),
		graphEvent(kv.Added, "dep-1", "d1", owners(ownerRef("owner", "o", true))),
		graphEvent(kv.Added, "dep-2", "d2", owners(ownerRef("owner", "o", false))),
		graphEvent(kv.Added, "dep-wrong-name", "d3", owners(ownerRef("not-owner", "o", true))),
	} {
		if w := apply(ev); len(w.del)+len(w.orphan) != 0 {
			t.Fatalf("work before the scan: %+v", w)
		}
	}
	if w := g.scan(); !slices.Equal(names(w.del), []string{"dep-of-ghost", "dep-wrong-name"}) || len(w.orphan) != 0 {
		t.Errorf("scan: %v %v", names(w.del), names(w.orphan))
	}
	steps := []struct {
		name        string
		ev          kv.Event
		del, orphan []string
	}{
		{"a dependent of an owner not seen", graphEvent(kv.Added, "late", "d4", owners(ownerRef("later", "l", true))),
			[]string{"late"}, nil},
		{"the owner shows up: nothing", graphEvent(kv.Added, "later", "l", ""), nil, nil},
		{"an update that changes nothing that matters", graphEvent(kv.Modified, "dep-1", "d1", owners(ownerRef("owner", "o", true))), nil, nil},
		{"owner deleting in the foreground: it and its dependents",
			graphEvent(kv.Modified, "owner", "o", `"deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":["foregroundDeletion"]`),
			[]string{"dep-1", "dep-2", "dep-wrong-name", "owner"}, nil},
		{"a dependent gone: the waiting owner", graphEvent(kv.Deleted, "dep-1", "d1", ""), []string{"owner"}, nil},
		{"a reference stops blocking: the waiting owner", graphEvent(kv.Modified, "dep-wrong-name", "d3", owners(ownerRef("not-owner", "o", false))),
			[]string{"owner"}, nil},
		{"a reference removed: the waiting owner", graphEvent(kv.Modified, "dep-2", "d2", ""), []string{"owner"}, nil},
		{"owner deleted: its dependents", graphEvent(kv.Deleted, "later", "l", ""), []string{"late"}, nil},
		{"orphaning owner", graphEvent(kv.Modified, "dep-2", "d2", `"deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":["orphan"]`),
			nil, []string{"dep-2"}},
		{"still orphaning: once", graphEvent(kv.Modified, "dep-2", "d2", `"deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":["orphan","x"]`),
			nil, nil},
	}
	for _, st := range steps {
		w := apply(st.ev)
		if !slices.Equal(names(w.del), st.del) || !slices.Equal(names(w.orphan), st.orphan) {
			t.Errorf("%s: del %v orphan %v, want %v %v", st.name, names(w.del), names(w.orphan), st.del, st.orphan)
		}
	}
	if deps := g.dependentsOf("o"); len(deps) != 1 || deps[0].ref.Key.Name != "dep-wrong-name" || deps[0].block {
		t.Errorf("dependents of the owner: %+v", deps)
	}
}

// The graph keeps nodes only for what the garbage collector must know:
// objects with owners, being deleted, or owning a node. An owner it has no
// node for is looked up in the store when a dependent names it; one not
// found (gone, another uid) makes the dependent suspect.
func TestGraphSparse(t *testing.T) {
	ref := func(name, uid string, block bool) string { return refJSON("v1", "ConfigMap", name, uid, block) }
	deletingFg := `"deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":["foregroundDeletion"]`
	// "early" is in the store, but its informer has not handed it over yet.
	early := graphEvent(kv.Added, "early", "e", "").Object
	g, apply := liveGraph(early)
	for i := range 1000 {
		apply(graphEvent(kv.Added, fmt.Sprintf("plain-%d", i), fmt.Sprintf("p%d", i), `"finalizers":["x"]`))
	}
	if len(g.nodes) != 0 {
		t.Fatalf("%d nodes for objects without owners, dependents or deletion", len(g.nodes))
	}
	g.scan()
	hasNodes := func(step string, want ...string) {
		t.Helper()
		var got []string
		for _, n := range g.nodes {
			got = append(got, n.ref.Key.Name)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: nodes %v, want %v", step, got, want)
		}
	}
	steps := []struct {
		name        string
		ev          kv.Event
		del, orphan []string
		nodes       []string
	}{
		{"a dependent of an owner its informer did not show yet: found in the store, not suspect",
			graphEvent(kv.Added, "dep-e", "de", owners(ref("early", "e", true))), nil, nil, []string{"dep-e", "early"}},
		{"the owner's informer catches up: nothing", graphEvent(kv.Added, "early", "e", ""), nil, nil, []string{"dep-e", "early"}},
		{"a dependent of an owner with another uid in the store: suspect, no node for the other",
			graphEvent(kv.Added, "dep-x", "dx", owners(ref("plain-1", "not-p1", true))), []string{"dep-x"}, nil,
			[]string{"dep-e", "dep-x", "early"}},
		{"a dependent of an owner not in the store: suspect",
			graphEvent(kv.Added, "dep-g", "dg", owners(ref("ghost", "g", true))), []string{"dep-g"}, nil,
			[]string{"dep-e", "dep-g", "dep-x", "early"}},
		{"the owner never seen is deleted: its dependents", graphEvent(kv.Deleted, "ghost", "g", ""), []string{"dep-g"}, nil,
			[]string{"dep-e", "dep-g", "dep-x", "early"}},
		{"a plain object deleted: nothing", graphEvent(kv.Deleted, "plain-2", "p2", ""), nil, nil,
			[]string{"dep-e", "dep-g", "dep-x", "early"}},
		{"a dependent of a plain object (found): its node",
			graphEvent(kv.Added, "dep-p3", "dp3", owners(ref("plain-3", "p3", false))), nil, nil,
			[]string{"dep-e", "dep-g", "dep-p3", "dep-x", "early", "plain-3"}},
		{"that owner deleted in the foreground: it and its dependents",
			graphEvent(kv.Modified, "plain-3", "p3", deletingFg), []string{"dep-p3", "plain-3"}, nil,
			[]string{"dep-e", "dep-g", "dep-p3", "dep-x", "early", "plain-3"}},
		{"its dependent gone: the waiting owner, which keeps its node (being deleted)",
			graphEvent(kv.Deleted, "dep-p3", "dp3", ""), []string{"plain-3"}, nil,
			[]string{"dep-e", "dep-g", "dep-x", "early", "plain-3"}},
		{"a dependent drops its reference: the owner loses its node",
			graphEvent(kv.Modified, "dep-e", "de", ""), nil, nil, []string{"dep-g", "dep-x", "plain-3"}},
		{"an owner deleted with orphans: its own node", graphEvent(kv.Modified, "plain-4", "p4",
			`"deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":["orphan"]`), nil, []string{"plain-4"},
			[]string{"dep-g", "dep-x", "plain-3", "plain-4"}},
		{"a dependent whose owner waits: found in the foreground, suspect",
			graphEvent(kv.Added, "dep-w", "dw", owners(ref("plain-3", "p3", true))), []string{"dep-w"}, nil,
			[]string{"dep-g", "dep-w", "dep-x", "plain-3", "plain-4"}},
		{"the waiting owner goes: its dependent", graphEvent(kv.Deleted, "plain-3", "p3", deletingFg), []string{"dep-w"}, nil,
			[]string{"dep-g", "dep-w", "dep-x", "plain-4"}},
	}
	for _, st := range steps {
		w := apply(st.ev)
		if !slices.Equal(names(w.del), st.del) || !slices.Equal(names(w.orphan), st.orphan) {
			t.Errorf("%s: del %v orphan %v, want %v %v", st.name, names(w.del), names(w.orphan), st.del, st.orphan)
		}
		hasNodes(st.name, st.nodes...)
	}
}

// gcHarness is a garbage collector over a fake store and a fake dynamic
// client, for the decisions of its workers.
type gcHarness struct {
	*gc
	store  *fakeStore
	client *dynamicfake.FakeDynamicClient
}

var (
	cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	crGVR = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
)

func newGCHarness(t *testing.T) *gcHarness {
	t.Helper()
	h := &gcHarness{store: newFakeStore(),
		client: dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
			map[schema.GroupVersionResource]string{cmGVR: "ConfigMapList", crGVR: "ClusterRoleList"})}
	opts := Options{Config: DefaultConfig(), Store: h.store}
	h.gc = newGC(opts, h.client, &counters{}, nil, discard())
	h.learn([]Resource{{StoreKey: "configmaps", GVR: cmGVR, Kind: "ConfigMap", Namespaced: true},
		{StoreKey: "clusterroles.rbac.authorization.k8s.io", GVR: crGVR, Kind: "ClusterRole"}})
	t.Cleanup(func() {
		h.deleteQ.ShutDown()
		h.orphan.ShutDown()
	})
	return h
}

// cm stores a ConfigMap in namespace "ns" and feeds it to the graph.
func (h *gcHarness) cm(name, uid, meta string) objRef {
	o := h.store.put("configmaps", "ns", name, uid, meta)
	h.graph.apply(kv.Event{Type: kv.Added, Object: o})
	return objRef{Key: o.Key, UID: uid}
}

// actions returns the client's writes as "verb name detail".
func (h *gcHarness) actions() []string {
	var out []string
	for _, a := range h.client.Actions() {
		switch a := a.(type) {
		case clienttesting.DeleteActionImpl:
			o := a.GetDeleteOptions()
			out = append(out, fmt.Sprintf("delete %s uid=%s policy=%s", a.GetName(), *o.Preconditions.UID, *o.PropagationPolicy))
		case clienttesting.PatchActionImpl:
			out = append(out, fmt.Sprintf("patch %s %s %s", a.GetName(), a.GetPatchType(), a.GetPatch()))
		default:
			out = append(out, a.GetVerb())
		}
	}
	h.client.ClearActions()
	return out
}

func TestAttemptToDelete(t *testing.T) {
	cmOwner := func(name, uid string) string { return refJSON("v1", "ConfigMap", name, uid, true) }
	deleting := `"deletionTimestamp":"2026-01-01T00:00:00Z"`
	for _, tc := range []struct {
		name  string
		setup func(h *gcHarness) objRef
		want  []string
		err   error
	}{
		{"owner not in the graph yet but in the store: kept", func(h *gcHarness) objRef {
			h.store.put("configmaps", "ns", "owner", "o", "") // not applied to the graph
			return h.cm("dep", "d", owners(cmOwner("owner", "o")))
		}, nil, nil},
		{"owner gone: deleted with a uid precondition", func(h *gcHarness) objRef {
			return h.cm("dep", "d", owners(cmOwner("owner", "o")))
		}, []string{"delete dep uid=d policy=Background"}, nil},
		{"same name, other uid: the owner is gone", func(h *gcHarness) objRef {
			h.cm("owner", "o2", "")
			return h.cm("dep", "d", owners(cmOwner("owner", "o")))
		}, []string{"delete dep uid=d policy=Background"}, nil},
		{"its own orphan finalizer", func(h *gcHarness) objRef {
			return h.cm("dep", "d", owners(cmOwner("owner", "o"))+`,"finalizers":["orphan"]`)
		}, []string{"delete dep uid=d policy=Orphan"}, nil},
		{"a solid owner left: the dangling reference goes", func(h *gcHarness) objRef {
			h.cm("keeper", "k", "")
			return h.cm("dep", "d", owners(cmOwner("owner", "o"), cmOwner("keeper", "k")))
		}, []string{`patch dep application/merge-patch+json {"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"keeper","uid":"k","blockOwnerDeletion":true}],"resourceVersion":"2"}}`}, nil},
		{"owner waiting, dependents of its own: foreground", func(h *gcHarness) objRef {
			h.cm("owner", "o", deleting+`,"finalizers":["foregroundDeletion"]`)
			d := h.cm("dep", "d", owners(cmOwner("owner", "o")))
			h.cm("grand", "g", owners(cmOwner("dep", "d")))
			return d
		}, []string{"delete dep uid=d policy=Foreground"}, nil},
		{"being deleted: left alone", func(h *gcHarness) objRef {
			return h.cm("dep", "d", owners(cmOwner("owner", "o"))+","+deleting+`,"finalizers":["x"]`)
		}, nil, nil},
		{"cluster-scoped with a namespaced owner: never collected", func(h *gcHarness) objRef {
			o := h.store.put("clusterroles.rbac.authorization.k8s.io", "", "cr", "c", owners(cmOwner("owner", "o")))
			h.graph.apply(kv.Event{Type: kv.Added, Object: o})
			return objRef{Key: o.Key, UID: "c"}
		}, nil, nil},
		{"cluster-scoped owner of a namespaced object", func(h *gcHarness) objRef {
			h.store.put("clusterroles.rbac.authorization.k8s.io", "", "cr", "c", "")
			return h.cm("dep", "d", owners(refJSON("rbac.authorization.k8s.io/v1", "ClusterRole", "cr", "c", true)))
		}, nil, nil},
		{"owner kind not served: retried", func(h *gcHarness) objRef {
			return h.cm("dep", "d", owners(refJSON("example.com/v1", "Gadget", "g", "g", true)))
		}, nil, ErrUnknownKind},
		{"foreground owner without blocking dependents: finalizer removed", func(h *gcHarness) objRef {
			o := h.cm("owner", "o", deleting+`,"finalizers":["a","foregroundDeletion"]`)
			h.cm("dep", "d", owners(refJSON("v1", "ConfigMap", "owner", "o", false)))
			return o
		}, []string{`patch owner application/merge-patch+json {"metadata":{"finalizers":["a"],"resourceVersion":"1"}}`}, nil},
		{"foreground owner with a blocking dependent: it is queued", func(h *gcHarness) objRef {
			o := h.cm("owner", "o", deleting+`,"finalizers":["foregroundDeletion"]`)
			h.cm("dep", "d", owners(cmOwner("owner", "o")))
			return o
		}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newGCHarness(t)
			it := tc.setup(h)
			err := h.attemptToDelete(t.Context(), it)
			if !errors.Is(err, tc.err) || (err != nil) != (tc.err != nil) {
				t.Fatalf("attemptToDelete: %v, want %v", err, tc.err)
			}
			if got := h.actions(); !slices.Equal(got, tc.want) {
				t.Errorf("writes:\n%q\nwant\n%q", got, tc.want)
			}
			if h.store.consistent == 0 && it.Key.Name != "" {
				t.Error("no consistent read before deciding")
			}
		})
	}
}

func TestAttemptToDeleteQueuesBlockingDependents(t *testing.T) {
	h := newGCHarness(t)
	o := h.cm("owner", "o", `"deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":["foregroundDeletion"]`)
	h.cm("blocking", "b", owners(refJSON("v1", "ConfigMap", "owner", "o", true)))
	h.cm("blocking-deleting-fg", "f", owners(refJSON("v1", "ConfigMap", "owner", "o", true))+
		`,"deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":["foregroundDeletion"]`)
	h.cm("not-blocking", "n", owners(refJSON("v1", "ConfigMap", "owner", "o", false)))
	helperFatal(t, h.attemptToDelete(t.Context(), o))
	if h.deleteQ.Len() != 1 {
		t.Fatalf("%d queued, want 1 (the blocking dependent not deleting in the foreground)", h.deleteQ.Len())
	}
	if it, _ := h.deleteQ.Get(); it.Key.Name != "blocking" {
		t.Errorf("queued %v", it.Key)
	}
}

func TestAttemptToOrphan(t *testing.T) {
	h := newGCHarness(t)
	o := h.cm("owner", "o", `"deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":["orphan"]`)
	h.cm("dep-1", "d1", owners(refJSON("v1", "ConfigMap", "owner", "o", true)))
	h.cm("dep-2", "d2", owners(refJSON("v1", "ConfigMap", "keeper", "k", false), refJSON("v1", "ConfigMap", "owner", "o", true)))
	helperFatal(t, h.attemptToOrphan(t.Context(), o))
	got := h.actions()
	slices.Sort(got[:2])
	want := []string{
		`patch dep-1 application/merge-patch+json {"metadata":{"ownerReferences":null,"resourceVersion":"2"}}`,
		`patch dep-2 application/merge-patch+json {"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"keeper","uid":"k","blockOwnerDeletion":false}],"resourceVersion":"3"}}`,
		`patch owner application/merge-patch+json {"metadata":{"finalizers":null,"resourceVersion":"1"}}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("writes:\n%q\nwant\n%q", got, want)
	}
	stats := h.stats.snapshot()
	if stats.GCRefsRemoved != 2 || stats.GCFinalizersRemoved != 1 {
		t.Errorf("stats %+v", stats)
	}
	// The owner no longer orphaning (finalizer gone): nothing to do.
	h.store.put("configmaps", "ns", "owner", "o", `"deletionTimestamp":"2026-01-01T00:00:00Z"`)
	helperFatal(t, h.attemptToOrphan(t.Context(), o))
	if got := h.actions(); len(got) != 0 {
		t.Errorf("writes after the finalizer went: %q", got)
	}
}
