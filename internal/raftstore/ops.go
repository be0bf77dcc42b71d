package raftstore

import (
	"context"
	"fmt"
	"time"

	"github.com/litek8s/litek8s/internal/kv"
)

// Propose replicates w and returns the stored object once this member (the
// leader) has applied it. On a follower it returns kv.ErrNotLeader: the API
// forwards writes to the leader before they get here.
func (s *Store) Propose(ctx context.Context, w kv.Write) (*kv.Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if w.Op < kv.OpCreate || w.Op > kv.OpDelete {
		// Every member's FSM would panic on this record, at every restart.
		return nil, fmt.Errorf("raftstore: propose: invalid operation %v", w.Op)
	}
	if !s.IsLeader() {
		return nil, kv.ErrNotLeader
	}
	start := time.Now()
	if s.cfg.Transformer != nil {
		stored, err := toStorage(s.cfg.Transformer, w.Key, w.Object)
		if err != nil {
			return nil, fmt.Errorf("raftstore: propose %s: %w", w.Key, err)
		}
		w.Object = stored
	}
	f := s.raft.Apply(encodeRecord(&w), s.cfg.ApplyTimeout)
	if err := s.await(f); err != nil {
		return nil, mapRaftError(err)
	}
	s.m.propose.Observe(time.Since(start).Seconds())
	res, ok := f.Response().(*applyResult)
	if !ok || res == nil {
		return nil, kv.ErrUnknownOutcome
	}
	return res.obj, res.err
}

// Get returns the object at k and the revision it was read at. With
// consistent it first waits for the read index (see Sync).
func (s *Store) Get(ctx context.Context, k kv.Key, consistent bool) (*kv.Object, uint64, error) {
	if consistent {
		if err := s.Sync(ctx); err != nil {
			return nil, 0, err
		}
	}
	obj, rev := s.fsm.get(k)
	if obj == nil {
		return nil, rev, kv.ErrNotFound
	}
	return obj, rev, nil
}

// List returns an immutable view of resource in namespace (all namespaces
// when empty). With consistent it first waits for the read index.
func (s *Store) List(ctx context.Context, resource, namespace string, consistent bool) (*List, error) {
	if consistent {
		if err := s.Sync(ctx); err != nil {
			return nil, err
		}
	}
	return s.fsm.list(resource, namespace), nil
}

// Watch returns a watcher of every change to resource (every resource when
// empty; in namespace, or all when empty) after revision rev. kv.ErrExpired when rev is older than the
// change feed's window.
func (s *Store) Watch(resource, namespace string, rev uint64) (kv.Watcher, error) {
	w, err := s.fsm.watch(resource, namespace, rev)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// WaitRevision blocks until this member has applied revision rev (or ctx
// ends): reads at an explicit resourceVersion or continue token on a member
// that lags must not be served from an older state.
func (s *Store) WaitRevision(ctx context.Context, rev uint64) error {
	return s.fsm.waitApplied(ctx, rev)
}

// ListAt returns resource in namespace as it was at revision rev (a
// paginated list's continue token, an exact resourceVersion): kv.ErrExpired
// when this member no longer keeps that state. It first waits (within ctx)
// until this member has applied rev.
func (s *Store) ListAt(ctx context.Context, resource, namespace string, rev uint64) (*List, error) {
	if err := s.fsm.waitApplied(ctx, rev); err != nil {
		return nil, err
	}
	if l := s.fsm.listAt(resource, namespace, rev); l != nil {
		return l, nil
	}
	return nil, &kv.ExpiredError{Oldest: s.OldestRevision()}
}
