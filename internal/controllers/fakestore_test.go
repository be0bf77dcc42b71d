package controllers

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/litek8s/litek8s/internal/kv"
)

// fakeStore is an in-memory Store for unit tests: objects by key, lists in
// key order, and watches that the test scripts (each Watch call takes the
// next scripted watcher; without one it fails with kv.ErrClosed).
type fakeStore struct {
	mu      sync.Mutex
	objs    map[kv.Key]*kv.Object
	rev     uint64
	watches []*fakeWatcher
	// consistent counts the consistent reads.
	consistent int
	lists      int
	// beforeList, when set, runs at the start of each List with its
	// number (1 for the first).
	beforeList func(n int)
}

func newFakeStore() *fakeStore { return &fakeStore{objs: make(map[kv.Key]*kv.Object)} }

// put stores an object at the next revision: meta is spliced into its
// metadata (`"ownerReferences":[...]`, ...).
func (s *fakeStore) put(res, ns, name, uid, meta string) *kv.Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rev++
	if meta != "" {
		meta = "," + meta
	}
	raw := fmt.Sprintf(`{"metadata":{"name":%q,"namespace":%q,"uid":%q,"resourceVersion":"%d"%s}}`, name, ns, uid, s.rev, meta)
	o := &kv.Object{Key: kv.Key{Resource: res, Namespace: ns, Name: name}, Raw: []byte(raw), RV: s.rev, UID: uid}
	s.objs[o.Key] = o
	return o
}

// set stores o as it is.
func (s *fakeStore) set(o *kv.Object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rev = max(s.rev, o.RV)
	s.objs[o.Key] = o
}

func (s *fakeStore) del(k kv.Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rev++
	delete(s.objs, k)
}

func (s *fakeStore) Get(ctx context.Context, k kv.Key, consistent bool) (*kv.Object, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if consistent {
		s.consistent++
	}
	if o := s.objs[k]; o != nil {
		return o, s.rev, nil
	}
	return nil, s.rev, kv.ErrNotFound
}

func (s *fakeStore) List(ctx context.Context, resource, namespace string, consistent bool) (*kv.List, error) {
	s.mu.Lock()
	s.lists++
	n, hook := s.lists, s.beforeList
	s.mu.Unlock()
	if hook != nil {
		hook(n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var objs []*kv.Object
	for k, o := range s.objs {
		if k.Resource == resource && (namespace == "" || k.Namespace == namespace) {
			objs = append(objs, o)
		}
	}
	slices.SortFunc(objs, func(a, b *kv.Object) int {
		if a.Key.Less(b.Key) {
			return -1
		}
		return 1
	})
	return &kv.List{Rev: s.rev, ModRev: s.rev, Source: sliceSource(objs)}, nil
}

// sliceSource is a kv.ListSource of objects in key order (after is not
// used by the informer).
type sliceSource []*kv.Object

func (s sliceSource) Each(_, _ string, fn func(*kv.Object) bool) {
	for _, o := range s {
		if !fn(o) {
			return
		}
	}
}

func (s sliceSource) Count(string) int { return len(s) }

func (s *fakeStore) Watch(resource, namespace string, rev uint64) (kv.Watcher, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.watches) == 0 {
		return nil, kv.ErrClosed
	}
	w := s.watches[0]
	s.watches = s.watches[1:]
	w.from = rev
	return w, nil
}

func (s *fakeStore) Revision() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rev
}

// script adds a watcher that delivers evs, then ends with err.
func (s *fakeStore) script(err error, evs ...kv.Event) *fakeWatcher {
	w := &fakeWatcher{evs: evs, ready: make(chan struct{}), err: err}
	close(w.ready) // ended: its events are all there is
	s.mu.Lock()
	s.watches = append(s.watches, w)
	s.mu.Unlock()
	return w
}

type fakeWatcher struct {
	mu    sync.Mutex
	evs   []kv.Event
	ready chan struct{}
	err   error
	from  uint64 // the revision it was asked for
}

func (w *fakeWatcher) Ready() <-chan struct{} { return w.ready }
func (w *fakeWatcher) Take(buf []kv.Event) ([]kv.Event, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	buf = append(buf, w.evs...)
	w.evs = nil
	return buf, false
}
func (w *fakeWatcher) Err() error { return w.err }
func (w *fakeWatcher) Stop()      {}

// refJSON is one ownerReference in JSON.
func refJSON(apiVersion, kind, name, uid string, block bool) string {
	return fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"name":%q,"uid":%q,"blockOwnerDeletion":%v}`, apiVersion, kind, name, uid, block)
}

func owners(refs ...string) string { return `"ownerReferences":[` + strings.Join(refs, ",") + "]" }

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

var _ Store = (*fakeStore)(nil)

func helperFatal(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
