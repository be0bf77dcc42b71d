package raftstore

import (
	"context"
	"sync"
)

// Leader-only work for other packages (the controllers): RunAsLeader runs a
// function for each term in which this member leads, started by
// runLeadership from the buffered NotifyCh after the post-election Barrier
// and cancelled (and waited for) when the term ends.
//
// State: leaderWork lives in Store.work and is guarded by Store.mu (lock
// order: Store.mu is a leaf; nothing else is locked under it).

// leaderWork is the registered work and the current term.
type leaderWork struct {
	// term is the current leadership term once its Barrier has succeeded;
	// nil while this member does not lead (or is not ready yet).
	term *leaderTerm
	// fns are the registered functions (RunAsLeader calls in progress).
	fns map[*leaderFn]struct{}
}

// leaderTerm is one term of leadership of this member.
type leaderTerm struct {
	ctx context.Context // cancelled when the term ends
	// wg counts becomeLeader and the runs of the term: runLeadership
	// waits for it before it handles the next leadership change.
	wg *sync.WaitGroup
}

// leaderFn is one RunAsLeader registration.
type leaderFn struct {
	ctx context.Context // the caller's: ends the registration
	fn  func(ctx context.Context)
	// done is closed when the latest run returns; nil before the first.
	// Guarded by Store.mu.
	done chan struct{}
}

// RunAsLeader calls fn each time this member becomes the leader, once the
// new leader's Barrier has applied everything of earlier terms, with a
// context that is cancelled when leadership is lost (or ctx ends). It calls
// fn at most once per term, never twice at once: a term's run has returned
// before the next leadership change is handled, so fn of a later term
// never overlaps fn of an earlier one on this member. When this member
// already leads, fn starts at once.
//
// RunAsLeader blocks until ctx ends and the last run of fn has returned.
// fn must return promptly once its context is cancelled: until it does,
// this member handles no leadership change.
func (s *Store) RunAsLeader(ctx context.Context, fn func(ctx context.Context)) {
	f := &leaderFn{ctx: ctx, fn: fn}
	s.mu.Lock()
	if s.work.fns == nil {
		s.work.fns = make(map[*leaderFn]struct{})
	}
	s.work.fns[f] = struct{}{}
	if t := s.work.term; t != nil {
		s.startRun(t, f)
	}
	s.mu.Unlock()

	<-ctx.Done()
	s.mu.Lock()
	delete(s.work.fns, f)
	done := f.done
	s.mu.Unlock()
	if done != nil {
		<-done // the run's context is cancelled with ctx
	}
}

// startRun runs f for term t in a goroutine that t.wg counts. Caller must
// hold s.mu.
func (s *Store) startRun(t *leaderTerm, f *leaderFn) {
	if t.ctx.Err() != nil || f.ctx.Err() != nil {
		return
	}
	done := make(chan struct{})
	f.done = done
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer close(done)
		ctx, cancel := context.WithCancel(t.ctx)
		stop := context.AfterFunc(f.ctx, cancel)
		defer func() {
			stop()
			cancel()
		}()
		f.fn(ctx)
	}()
}

// beginTerm makes ctx's term current and starts every registered function
// for it, unless the term has already ended. Called by becomeLeader after
// the Barrier, while wg counts becomeLeader itself.
func (s *Store) beginTerm(ctx context.Context, wg *sync.WaitGroup) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ctx.Err() != nil {
		return
	}
	t := &leaderTerm{ctx: ctx, wg: wg}
	s.work.term = t
	for f := range s.work.fns {
		s.startRun(t, f)
	}
}

// endTerm forgets the current term: no run starts for it any more. Called
// by runLeadership after it cancelled the term and before it waits for the
// term's goroutines (so that no wg.Add races with that Wait).
func (s *Store) endTerm() {
	s.mu.Lock()
	s.work.term = nil
	s.mu.Unlock()
}
