package controllers

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/kv"
)

// sharedListStore is a fakeStore whose List returns prepared views (the
// first, then the second for every later List), as the real store shares
// its copy-on-write B-tree with every reader: holding a list costs the
// informer nothing while the objects do not change.
type sharedListStore struct {
	*fakeStore
	lists []*kv.List
}

func (s *sharedListStore) List(context.Context, string, string, bool) (*kv.List, error) {
	l := s.lists[0]
	if len(s.lists) > 1 {
		s.lists = s.lists[1:]
	}
	return l, nil
}

// retainedPerObject feeds n plain ConfigMaps (no owners, no finalizers,
// not deleting: nothing the garbage collector acts on) through a garbage
// collector's informer and graph, n Added from the list then n Modified
// from the watch, and returns the heap the informer and the graph still
// hold per object once the informer stopped.
func retainedPerObject(t testing.TB, n int) float64 {
	name := func(i int) (string, string) {
		return fmt.Sprintf("cm-%06d", i), fmt.Sprintf("00000000-0000-0000-0000-%012d", i)
	}
	// cur: what the store holds at the end, and its view: alive before
	// and after.
	cur := make([]*kv.Object, n)
	for i := range cur {
		nm, uid := name(i)
		cur[i] = cmObj(nm, uid, uint64(n+i+1))
	}
	now := &kv.List{Rev: uint64(2 * n), ModRev: uint64(2 * n), Source: sliceSource(cur)}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	// The listed objects: the store's past view, garbage once the
	// informer has moved on (unless it keeps them).
	listed := make([]*kv.Object, n)
	mod := make([]kv.Event, n)
	for i := range listed {
		nm, uid := name(i)
		listed[i] = cmObj(nm, uid, uint64(i+1))
		mod[i] = kv.Event{Type: kv.Modified, Object: cur[i], Prev: listed[i]}
	}
	s := &sharedListStore{fakeStore: newFakeStore(), lists: []*kv.List{{Rev: uint64(n), ModRev: uint64(n), Source: sliceSource(listed)}, now}}
	s.script(kv.ErrClosed, mod...)
	listed, mod = nil, nil
	h := &gcHarness{store: s.fakeStore}
	h.gc = newGC(Options{Config: DefaultConfig(), Store: s}, nil, &counters{}, nil, discard())
	h.learn([]Resource{{StoreKey: "configmaps", GVR: cmGVR, Kind: "ConfigMap", Namespaced: true}})
	in := newInformers(s, h.handle, &h.stats.gcResyncs, time.Millisecond, discard())
	if err := in.add(t.Context(), "configmaps"); err != nil {
		t.Fatal(err)
	}
	if !in.Watch(t.Context()) {
		t.Fatal("Watch: false")
	}
	for ok := true; ok; ok = in.Take(t.Context()) { // until the watch ends: the store closed
		<-in.Ready()
	}
	s.lists = nil   // the store's past view is the store's to drop
	s.watches = nil // and the fake's spent watcher (its channel's buffer)
	runtime.GC()
	runtime.ReadMemStats(&after)
	if path := os.Getenv("LITEK8S_GC_HEAP_PROFILE"); path != "" { // what is retained, for go tool pprof
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := pprof.WriteHeapProfile(f); err != nil {
			t.Fatal(err)
		}
	}
	runtime.KeepAlive(in)
	runtime.KeepAlive(h)
	runtime.KeepAlive(cur)
	runtime.KeepAlive(now)
	h.deleteQ.ShutDown()
	h.orphan.ShutDown()
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
}

// The garbage collector keeps next to nothing per object it does not act
// on: at 100,000 ConfigMaps its informer's view and its graph are not a
// second copy of every object's metadata (issue 20: they were 215 B per
// ConfigMap here, 131 in the graph, the rest the informer's map).
func TestGCRetainedPerPlainObject(t *testing.T) {
	const n = 100_000
	per := retainedPerObject(t, n)
	t.Logf("garbage collector retains %.1f bytes per ConfigMap (%d ConfigMaps)", per, n)
	if per > 16 {
		t.Errorf("retains %.1f bytes per plain ConfigMap, want at most 16", per)
	}
}

func BenchmarkGCRetainedPerPlainObject(b *testing.B) {
	var per float64
	for b.Loop() {
		per = retainedPerObject(b, 100_000)
	}
	b.ReportMetric(per, "retained-B/object")
}
