package raftstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/litek8s/litek8s/internal/kv"
)

// Sync waits until this member has applied every write acknowledged before
// the call (read-index): the leader confirms its leadership and reports its
// applied index; a follower asks the leader for it. Concurrent callers share
// one round trip. While leadership changes hands it waits for the new
// leader, up to readIndexTimeout, rather than failing the read.
func (s *Store) Sync(ctx context.Context) error {
	start, wait := time.Now(), s.m.readIndexFollower
	if s.IsLeader() {
		wait = s.m.readIndexLeader
	}
	idx, err := s.readIndex(ctx)
	for err != nil && leaderChanging(err) && time.Since(start) < readIndexTimeout {
		select { // a new leader, or this one's notice of its leadership
		case <-ctx.Done():
			return ctx.Err()
		case <-s.closing:
			return kv.ErrClosed
		case <-time.After(syncRetryPause):
		}
		idx, err = s.readIndex(ctx)
	}
	if err != nil {
		return err
	}
	if err := s.fsm.waitApplied(ctx, idx); err != nil {
		return err
	}
	wait.Observe(time.Since(start).Seconds())
	return nil
}

// syncRetryPause is how long Sync waits before asking again when the
// leader it asked is no longer the leader.
const syncRetryPause = 10 * time.Millisecond

// leaderChanging reports whether a read-index error means leadership is
// changing hands: the read may be asked again. (A read has no outcome to
// be unsure of: ErrUnknownOutcome here is a leader that lost its
// leadership while confirming it.)
func leaderChanging(err error) bool {
	return errors.Is(err, kv.ErrNotLeader) || errors.Is(err, kv.ErrNoLeader) || errors.Is(err, kv.ErrUnknownOutcome)
}

func (s *Store) readIndex(ctx context.Context) (uint64, error) {
	if s.IsLeader() {
		return s.leaderReads.get(ctx)
	}
	return s.remoteReads.get(ctx)
}

// leaderReadIndex confirms leadership and returns the applied index, which
// covers every write this leader acknowledged.
func (s *Store) leaderReadIndex(ctx context.Context) (uint64, error) {
	ready := s.leaderReady()
	for ready == nil { // elected, but the leadership notification is not handled yet
		if !s.IsLeader() {
			return 0, kv.ErrNotLeader
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
		ready = s.leaderReady()
	}
	select {
	case <-ready:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	if err := s.raft.VerifyLeader().Error(); err != nil {
		return 0, mapRaftError(err)
	}
	return s.fsm.appliedIndex(), nil
}

// remoteReadIndex asks the leader for its read index.
func (s *Store) remoteReadIndex(ctx context.Context) (uint64, error) {
	var out struct {
		Index uint64 `json:"index"`
	}
	if err := s.callLeader(ctx, http.MethodGet, pathReadIndex, nil, &out); err != nil {
		return 0, err
	}
	return out.Index, nil
}

// readIndexer coalesces read-index requests: a caller joins the next round
// (the ones in flight may have started before its read did), and one round
// trip serves every caller that joined it. Up to maxRounds rounds are in
// flight at once, so that under load a caller waits about one round trip,
// not the rest of the current one and then its own.
type readIndexer struct {
	fetch func(context.Context) (uint64, error)

	mu      sync.Mutex // guards running, next and closed
	running int        // rounds in flight
	next    *round
	closed  bool
	wg      sync.WaitGroup // rounds in flight
	// base is cancelled by close so that a round in flight ends at once.
	base   context.Context
	cancel context.CancelFunc
}

type round struct {
	done chan struct{}
	idx  uint64
	err  error
}

func newReadIndexer(fetch func(context.Context) (uint64, error)) *readIndexer {
	base, cancel := context.WithCancel(context.Background())
	return &readIndexer{fetch: fetch, base: base, cancel: cancel}
}

func (r *readIndexer) get(ctx context.Context) (uint64, error) {
	if err := ctx.Err(); err != nil { // a round may end before select sees ctx
		return 0, err
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return 0, kv.ErrClosed
	}
	if r.next == nil {
		r.next = &round{done: make(chan struct{})}
	}
	rd := r.next
	if r.running < maxRounds {
		r.start()
	}
	r.mu.Unlock()
	select {
	case <-rd.done:
		return rd.idx, rd.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// maxRounds bounds the read-index round trips in flight per member.
const maxRounds = 3

// start runs the pending round. Caller must hold mu.
func (r *readIndexer) start() {
	rd := r.next
	r.next = nil
	r.running++
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		ctx, cancel := context.WithTimeout(r.base, readIndexTimeout)
		rd.idx, rd.err = r.fetch(ctx)
		cancel()
		close(rd.done)
		r.mu.Lock()
		r.running--
		switch {
		case r.next != nil && r.closed: // callers queued for a round that will never run
			r.next.err = kv.ErrClosed
			close(r.next.done)
			r.next = nil
		case r.next != nil:
			r.start()
		}
		r.mu.Unlock()
	}()
}

// close refuses new rounds and waits for the one in flight (which ends
// within readIndexTimeout).
func (r *readIndexer) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
}

func decodeJSON(resp *http.Response, out any) error {
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("raftstore: decode %s answer: %w", resp.Request.URL.Path, err)
	}
	return nil
}
