package workload

import (
	"sync"
	"time"
)

// ExpectationsTTL is how long expectations wait for the informer before
// they are considered lost (kube: 5 minutes); a sync then goes ahead.
const ExpectationsTTL = 5 * time.Minute

// Expectations records, per controller key, the creations and deletions a
// controller made whose effect its pod informer has not shown yet. A
// controller does not act on a key (create or delete more) while its
// expectations are pending: its view would count its own writes twice.
type Expectations struct {
	mu sync.Mutex // guards byKey
	// byKey holds the pending work of each key.
	byKey map[string]*expected
}

type expected struct {
	adds    int
	deletes map[string]bool // pod keys
	at      time.Time
}

// NewExpectations returns empty expectations.
func NewExpectations() *Expectations { return &Expectations{byKey: make(map[string]*expected)} }

// Satisfied reports whether key has nothing pending (or its expectations
// expired).
func (e *Expectations) Satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.byKey[key]
	return !ok || (x.adds <= 0 && len(x.deletes) == 0) || time.Since(x.at) > ExpectationsTTL
}

// ExpectCreations sets key's pending creations to n (replacing what was).
func (e *Expectations) ExpectCreations(key string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.byKey[key] = &expected{adds: n, at: time.Now()}
}

// ExpectDeletions sets key's pending deletions to pods.
func (e *Expectations) ExpectDeletions(key string, pods []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x := &expected{deletes: make(map[string]bool, len(pods)), at: time.Now()}
	for _, p := range pods {
		x.deletes[p] = true
	}
	e.byKey[key] = x
}

// CreationObserved counts one creation of key as seen (or as never to
// come, when the create failed).
func (e *Expectations) CreationObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.byKey[key]; ok {
		x.adds--
	}
}

// DeletionObserved marks the deletion of pod (a namespace/name key) by
// key as seen.
func (e *Expectations) DeletionObserved(key, pod string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.byKey[key]; ok {
		delete(x.deletes, pod)
	}
}

// Forget drops key's expectations (its object was deleted).
func (e *Expectations) Forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.byKey, key)
}
