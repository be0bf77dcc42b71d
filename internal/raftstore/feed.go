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
	// watchers by resource; those of every resource under "".
	watchers map[string]map[*Watcher]struct{}
	buffer   int // how many events a watcher may have waiting
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
	for w := range f.watchers[""] {
		w.offer(ev)
	}
}

// oldestAvailable returns the smallest revision a watch may resume from.
func (f *feed) oldestAvailable() uint64 { return f.floor }

// watch registers a watcher of resource (every resource when empty; in
// namespace, or all when empty) that first receives every event after rev
// still in the ring.
func (f *feed) watch(resource, namespace string, rev uint64) (*Watcher, error) {
	if rev < f.floor {
		return nil, &kv.ExpiredError{Oldest: f.floor}
	}
	var replay []kv.Event
	f.each(func(ev kv.Event) {
		if ev.Object.RV > rev && (resource == "" || ev.Object.Key.Resource == resource) &&
			(namespace == "" || ev.Object.Key.Namespace == namespace) {
			replay = append(replay, ev)
		}
	})
	w := &Watcher{resource: resource, namespace: namespace, from: rev, limit: f.buffer + len(replay),
		queue: replay, ready: make(chan struct{}, 1), feed: f}
	if len(replay) > 0 {
		w.ready <- struct{}{}
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

// Watcher receives the events of one watch (see kv.Watcher). Its queue
// holds only the events it has not taken yet: at most limit, or the watch
// ends with ErrExpired and the client relists. An idle watcher holds no
// buffer (a channel of the limit's capacity was 24 KB per watcher).
type Watcher struct {
	resource, namespace string
	from                uint64
	limit               int
	feed                *feed
	ready               chan struct{} // capacity 1; closed when the watch ends
	mu                  *sync.Mutex   // the FSM's mu, set by the store
	err                 error         // guarded by mu

	qmu   sync.Mutex // guards queue; ended is written under mu and qmu
	queue []kv.Event
	ended bool
}

// queueKept is the capacity above which a queue mostly empty when taken
// is dropped: a burst's backlog is not held for good.
const queueKept = 64

// Ready returns the channel that says events may wait; it is closed when
// the watch ends.
func (w *Watcher) Ready() <-chan struct{} { return w.ready }

// Take appends the waiting events to buf; false once the watch ended.
func (w *Watcher) Take(buf []kv.Event) ([]kv.Event, bool) {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	buf = append(buf, w.queue...)
	if c := cap(w.queue); c > queueKept && len(w.queue) < c/4 {
		w.queue = nil
	} else {
		clear(w.queue) // the objects are the caller's now
		w.queue = w.queue[:0]
	}
	return buf, !w.ended
}

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

// offer queues ev without blocking; a watcher limit events behind ends
// with ErrExpired so the client relists. Caller must hold mu.
func (w *Watcher) offer(ev kv.Event) {
	if w.ended || ev.Object.RV <= w.from ||
		(w.namespace != "" && ev.Object.Key.Namespace != w.namespace) {
		return
	}
	w.qmu.Lock()
	if len(w.queue) >= w.limit {
		w.qmu.Unlock()
		w.end(kv.ErrExpired)
		w.feed.m.expiredSlow.Inc()
		return
	}
	w.queue = append(w.queue, ev)
	first := len(w.queue) == 1
	w.qmu.Unlock()
	if first { // else the reader was told and has not taken yet
		select {
		case w.ready <- struct{}{}:
		default: // a signal is pending already
		}
	}
}

// end ends the watcher once. Caller must hold mu.
func (w *Watcher) end(err error) {
	if w.ended {
		return
	}
	w.qmu.Lock()
	w.ended = true
	w.qmu.Unlock()
	w.err = err
	close(w.ready)
	if m := w.feed.watchers[w.resource]; m != nil {
		delete(m, w)
		if len(m) == 0 {
			delete(w.feed.watchers, w.resource)
		}
	}
}
