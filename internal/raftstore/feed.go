package raftstore

import (
	"sync"

	"github.com/litek8s/litek8s/internal/kv"
)

// feed is the change feed: a bounded ring of the latest events, from which a
// watch resumes, and the live watchers. Caller must hold the FSM's mu for
// every method (the FSM appends under it; watchers register under it, which
// makes "replay then follow" gap-free).
type feed struct {
	ring  []kv.Event
	next  int // position of the next append in ring
	full  bool
	floor uint64 // events with RV <= floor are not in the ring (evicted, or before a restore)
	// watchers by resource.
	watchers map[string]map[*Watcher]struct{}
	buffer   int // per-watcher channel capacity
	m        *metrics
}

func newFeed(size, buffer int, floor uint64, m *metrics) *feed {
	return &feed{ring: make([]kv.Event, size), floor: floor, buffer: buffer,
		watchers: make(map[string]map[*Watcher]struct{}), m: m}
}

// append records ev and delivers it to matching watchers without blocking.
func (f *feed) append(ev kv.Event) {
	if f.full {
		f.floor = f.ring[f.next].Object.RV
	}
	f.ring[f.next] = ev
	f.next++
	if f.next == len(f.ring) {
		f.next, f.full = 0, true
	}
	for w := range f.watchers[ev.Object.Key.Resource] {
		w.offer(ev)
	}
}

// oldestAvailable returns the smallest revision a watch may resume from.
func (f *feed) oldestAvailable() uint64 { return f.floor }

// watch registers a watcher of resource (in namespace, or all when empty)
// that first receives every event after rev still in the ring.
func (f *feed) watch(resource, namespace string, rev uint64) (*Watcher, error) {
	if rev < f.floor {
		return nil, &kv.ExpiredError{Oldest: f.floor}
	}
	var replay []kv.Event
	f.each(func(ev kv.Event) {
		if ev.Object.RV > rev && ev.Object.Key.Resource == resource &&
			(namespace == "" || ev.Object.Key.Namespace == namespace) {
			replay = append(replay, ev)
		}
	})
	w := &Watcher{resource: resource, namespace: namespace, from: rev,
		ch: make(chan kv.Event, f.buffer+len(replay)), feed: f}
	for _, ev := range replay {
		w.ch <- ev
	}
	m := f.watchers[resource]
	if m == nil {
		m = make(map[*Watcher]struct{})
		f.watchers[resource] = m
	}
	m[w] = struct{}{}
	return w, nil
}

// each calls fn for the events in the ring, oldest first.
func (f *feed) each(fn func(kv.Event)) {
	if f.full {
		for _, ev := range f.ring[f.next:] {
			fn(ev)
		}
	}
	for _, ev := range f.ring[:f.next] {
		fn(ev)
	}
}

// endAll ends every watcher with err (after a restore) and returns how
// many it ended.
func (f *feed) endAll(err error) int {
	n := 0
	for _, m := range f.watchers {
		for w := range m {
			w.end(err)
			n++
		}
	}
	return n
}

// Watcher receives the events of one watch. Read Events until it is closed,
// then Err tells why (nil after Stop). Call Stop when done.
type Watcher struct {
	resource, namespace string
	from                uint64
	ch                  chan kv.Event
	feed                *feed
	mu                  *sync.Mutex // the FSM's mu, set by the store
	err                 error       // guarded by mu
	ended               bool        // guarded by mu
}

// Events returns the channel of events; it is closed when the watch ends.
func (w *Watcher) Events() <-chan kv.Event { return w.ch }

// Err returns why the watch ended: kv.ErrExpired when the watcher could not
// keep up or the store was restored, kv.ErrClosed on shutdown.
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Stop ends the watch and releases it. Safe to call more than once.
func (w *Watcher) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.end(nil)
}

// offer delivers ev without blocking; a full buffer ends the watch with
// ErrExpired so the client relists. Caller must hold mu.
func (w *Watcher) offer(ev kv.Event) {
	if w.ended || ev.Object.RV <= w.from ||
		(w.namespace != "" && ev.Object.Key.Namespace != w.namespace) {
		return
	}
	select {
	case w.ch <- ev:
	default:
		w.end(kv.ErrExpired)
		w.feed.m.expiredSlow.Inc()
	}
}

// end closes the watcher once. Caller must hold mu.
func (w *Watcher) end(err error) {
	if w.ended {
		return
	}
	w.ended, w.err = true, err
	close(w.ch)
	if m := w.feed.watchers[w.resource]; m != nil {
		delete(m, w)
		if len(m) == 0 {
			delete(w.feed.watchers, w.resource)
		}
	}
}
