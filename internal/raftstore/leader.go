package raftstore

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// runLeadership follows leadership changes from the buffered NotifyCh. On
// gaining leadership it runs a Barrier (so everything of earlier terms is
// applied), marks itself ready to answer reads as leader, starts the
// leader-only work registered with RunAsLeader and records this member; on
// losing it, it cancels all of that and waits for it before anything else.
func (s *Store) runLeadership(ctx context.Context) {
	var (
		stop func()
		wg   sync.WaitGroup
	)
	end := func() {
		if stop != nil {
			stop()
			s.endTerm()
			wg.Wait()
			stop = nil
		}
		s.mu.Lock()
		s.ready = nil
		s.mu.Unlock()
	}
	defer end()
	for {
		select {
		case <-ctx.Done():
			return
		case leader := <-s.notify:
			end()
			if !leader {
				continue
			}
			lctx, cancel := context.WithCancel(ctx)
			stop = cancel
			ready := make(chan struct{})
			s.mu.Lock()
			s.ready = ready
			s.mu.Unlock()
			wg.Add(1)
			go func() { defer wg.Done(); s.becomeLeader(lctx, ready, &wg) }()
		}
	}
}

// becomeLeader runs while wg counts it; the term's leader-only work joins
// wg (beginTerm). With dead-member cleanup on, it then runs it for the rest
// of the term.
func (s *Store) becomeLeader(ctx context.Context, ready chan struct{}, wg *sync.WaitGroup) {
	// Retry the barrier while we lead: until it succeeds this member must
	// not answer reads as leader. Losing leadership cancels ctx.
	for {
		err := s.await(s.raft.Barrier(s.cfg.ApplyTimeout))
		if err == nil {
			break
		}
		s.log.Warn("barrier after election failed", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.cfg.HeartbeatTimeout):
		}
	}
	close(ready)
	s.log.Info("leading", "revision", s.Revision())
	s.beginTerm(ctx, wg)
	s.fixOwnAddress(ctx)
	if err := s.recordMember(ctx, s.self()); err != nil && ctx.Err() == nil {
		s.log.Warn("record own membership", "err", err)
	}
	s.runAutopilot(ctx) // until the term ends (autopilot.go)
}

// fixOwnAddress gives this member's entry in the Raft configuration the
// transport's real address when it differs: a member restored from a
// backup, or restarted on another address (a new pod IP, a port picked at
// run time), would otherwise stay recorded where peers cannot reach it.
// AddVoter of a voter already present only changes its address. Leader only.
func (s *Store) fixOwnAddress(ctx context.Context) {
	cf := s.raft.GetConfiguration()
	if err := s.await(cf); err != nil {
		if ctx.Err() == nil {
			s.log.Warn("read Raft configuration", "err", err)
		}
		return
	}
	addr := s.trans.LocalAddr()
	for _, srv := range cf.Configuration().Servers {
		if srv.ID != raft.ServerID(s.cfg.ID) || srv.Address == addr {
			continue
		}
		if err := s.await(s.raft.AddVoter(srv.ID, addr, 0, s.cfg.ApplyTimeout)); err != nil {
			if ctx.Err() != nil {
				return // no longer leading
			}
			s.log.Warn("update own Raft address", "from", srv.Address, "to", addr, "err", err)
			return
		}
		s.log.Info("updated own Raft address", "from", srv.Address, "to", addr)
	}
}

// leaderReady returns the channel closed when this member may serve as
// leader, or nil when it is not the leader.
func (s *Store) leaderReady() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ready
}
