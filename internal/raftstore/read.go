package raftstore

import (
	"context"

	"github.com/litek8s/litek8s/internal/kv"
)

// get returns the object at k (nil when absent) and the applied revision.
func (f *fsm) get(k kv.Key) (*kv.Object, uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.objs.get(k), f.applied
}

// List is an immutable, consistent view of one resource (see kv.List).
type List = kv.List

// list returns a view of resource in namespace (all when empty).
func (f *fsm) list(resource, namespace string) *List {
	f.mu.Lock()
	v := f.objs.viewOf(resource)
	rev, mod := f.applied, f.objs.modRev(resource)
	f.mu.Unlock()
	if v == nil {
		return &List{Rev: rev, ModRev: mod}
	}
	return v.list(namespace, rev, mod)
}

// listAt returns a view of resource in namespace as it was at revision
// rev, or nil when that state is no longer kept.
func (f *fsm) listAt(resource, namespace string, rev uint64) *List {
	f.mu.Lock()
	v := f.objs.viewAt(resource, rev)
	f.mu.Unlock()
	if v == nil {
		return nil
	}
	return v.list(namespace, rev, rev)
}

// watch registers a watcher for events after rev.
func (f *fsm) watch(resource, namespace string, rev uint64) (*Watcher, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w, err := f.feed.watch(resource, namespace, rev)
	if w != nil {
		w.mu = &f.mu
	}
	return w, err
}

// appliedIndex returns the index of the last applied entry.
func (f *fsm) appliedIndex() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.applied
}

// waitApplied blocks until the applied index reaches idx or ctx ends.
func (f *fsm) waitApplied(ctx context.Context, idx uint64) error {
	for {
		f.mu.Lock()
		applied, ch := f.applied, f.changed
		f.mu.Unlock()
		if applied >= idx {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
