package statefulset

import (
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"
)

// Read-your-writes, as kube's consistency store
// (StaleControllerConsistencyStatefulSet): the controller records, per
// set, the resourceVersion of its latest write of each resource it
// reads, and syncs a set only once each informer's store has seen that
// version (a resourceVersion is the Raft index: one order for every
// resource). Deletions are not recorded: deleting again what a stale view
// still shows is harmless (the uid precondition or NotFound).

type resource int

const (
	podsResource resource = iota
	claimsResource
	setsResource
	revisionsResource
	numResources
)

// writtenTTL bounds how long a write is waited for (a store that was
// relisted past it, or a write that never shows, must not block a set).
const writtenTTL = 30 * time.Second

type writes struct {
	rv [numResources]uint64
	at time.Time
}

type written struct {
	stores [numResources]cache.Store

	mu    sync.Mutex // guards byKey
	byKey map[string]*writes
}

func newWritten(stores [numResources]cache.Store) *written {
	return &written{stores: stores, byKey: map[string]*writes{}}
}

// wrote records a write of resource r at rv for the set key.
func (w *written) wrote(key string, r resource, rv string) {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	x := w.byKey[key]
	if x == nil {
		x = &writes{}
		w.byKey[key] = x
	}
	x.rv[r], x.at = max(x.rv[r], n), time.Now()
}

// caughtUp reports whether the stores have seen key's writes.
func (w *written) caughtUp(key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	x := w.byKey[key]
	if x == nil {
		return true
	}
	if time.Since(x.at) > writtenTTL {
		delete(w.byKey, key)
		return true
	}
	for r, rv := range x.rv {
		if rv == 0 {
			continue
		}
		seen := w.stores[r].LastStoreSyncResourceVersion()
		if seen == "" { // client-go's AtomicFIFO is off: cannot tell
			continue
		}
		if n, err := strconv.ParseUint(seen, 10, 64); err == nil && n < rv {
			return false
		}
	}
	delete(w.byKey, key)
	return true
}

// forget drops key's writes (its set is gone).
func (w *written) forget(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.byKey, key)
}
