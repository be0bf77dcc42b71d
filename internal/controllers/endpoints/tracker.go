package endpoints

import (
	"strconv"
	"sync"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
)

// tracker remembers the slices the controller wrote, per service, until
// its informer's cache shows them: a sync against a cache without its own
// last writes would undo them or create duplicates.
type tracker struct {
	timeout time.Duration

	mu      sync.Mutex                        // guards pending
	pending map[string]map[string]expectation // service key -> slice name -> what was written
}

// expectation is a write: a slice stored at rv, or deleted.
type expectation struct {
	rv      uint64
	deleted bool
	at      time.Time
}

func newTracker(timeout time.Duration) *tracker {
	return &tracker{timeout: timeout, pending: map[string]map[string]expectation{}}
}

// wrote records that the slice is now s (nil: deleted).
func (t *tracker) wrote(svcKey, name string, s *discoveryv1.EndpointSlice) {
	e := expectation{deleted: s == nil, at: time.Now()}
	if s != nil {
		e.rv = rvOf(s)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending[svcKey] == nil {
		t.pending[svcKey] = map[string]expectation{}
	}
	t.pending[svcKey][name] = e
}

// stale reports whether the cache (get) misses a write of the service's,
// and for how long more it will be waited for; writes the cache shows,
// and those waited for too long, are forgotten.
func (t *tracker) stale(svcKey string, get func(name string) *discoveryv1.EndpointSlice) (bool, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var wait time.Duration
	for name, e := range t.pending[svcKey] {
		s := get(name)
		seen := e.deleted && s == nil || !e.deleted && s != nil && rvOf(s) >= e.rv
		left := t.timeout - time.Since(e.at)
		if seen || left <= 0 {
			delete(t.pending[svcKey], name)
			continue
		}
		wait = max(wait, left)
	}
	if len(t.pending[svcKey]) == 0 {
		delete(t.pending, svcKey)
		return false, 0
	}
	return true, wait
}

// forget drops what is remembered of the service.
func (t *tracker) forget(svcKey string) {
	t.mu.Lock()
	delete(t.pending, svcKey)
	t.mu.Unlock()
}

// rvOf is the slice's resourceVersion: litek8s's are Raft indexes,
// ordered.
func rvOf(s *discoveryv1.EndpointSlice) uint64 {
	n, _ := strconv.ParseUint(s.ResourceVersion, 10, 64)
	return n
}
