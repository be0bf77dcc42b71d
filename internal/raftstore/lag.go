package raftstore

import (
	"context"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/litek8s/litek8s/internal/httpx"
	"github.com/litek8s/litek8s/internal/kv"
)

// Lag and resync. A follower is ready (Store.Ready) only while the leader
// says it is caught up. Every follower reports its applied index to the leader
// every LagReportInterval (POST /internal/v1/lag, members only). The
// leader keeps the latest report of each member and a history of its own
// applied index over time, from which it computes each member's lag in
// entries and in seconds (Lag). The answer to a report tells a follower
// whose lag passed ResyncLagEntries (or that an administrator named, with
// RequestResync) to resync: the follower fences itself (not Ready; ends
// every watch with ErrExpired, so clients relist through consistent reads,
// which wait until it caught up), catches up through log replay or a
// snapshot install, and lifts the fence once it applied everything the
// leader had applied when it signalled.
//
// State: lagTracker (leader side) and fence (follower side) have their own
// mutexes, leaves like Store.mu.

const pathLag = "/internal/v1/lag"

// lagReport is what a follower sends; lagAnswer what the leader answers.
type lagReport struct {
	ID      string `json:"id"`
	Applied uint64 `json:"applied"`
}

type lagAnswer struct {
	// Applied is the leader's applied index when it answered.
	Applied uint64 `json:"applied"`
	Resync  bool   `json:"resync"`
}

// MemberLag is one member's lag as the leader sees it.
type MemberLag struct {
	ID string
	// Applied is the member's applied index at its last report (the
	// leader's own for the leader).
	Applied uint64
	// Entries is how many entries the leader applied that the member had
	// not at its last report; Seconds is how long ago the leader applied
	// the oldest of them.
	Entries uint64
	Seconds float64
	// LastReport is when the member last reported (zero: never, in this
	// term).
	LastReport time.Time
	// Resyncs counts the resync signals sent to it in this term.
	Resyncs int
}

// lagSampleEvery and lagSamples: the leader's applied index is sampled at
// most every 100 ms, and 3,000 samples (at least 5 minutes) are kept.
const (
	lagSampleEvery = 100 * time.Millisecond
	lagSamples     = 3000
)

type lagSample struct {
	index uint64
	at    time.Time
}

// lagTracker is the leader's view of its followers.
type lagTracker struct {
	mu      sync.Mutex // guards everything below
	term    uint64     // the term the reports belong to; a new term starts afresh
	members map[string]*MemberLag
	samples []lagSample // ring, oldest first from head once full
	head    int
	resync  map[string]bool // requested by an administrator
}

// sample records the leader's applied index at now. Caller holds mu.
func (t *lagTracker) sample(index uint64, now time.Time) {
	n := len(t.samples)
	if n > 0 {
		last := t.samples[(t.head+n-1)%n] // head is 0 until the ring is full
		if now.Sub(last.at) < lagSampleEvery || last.index == index {
			return
		}
	}
	if n < lagSamples {
		t.samples = append(t.samples, lagSample{index, now})
		return
	}
	t.samples[t.head] = lagSample{index, now}
	t.head = (t.head + 1) % lagSamples
}

// since returns when the leader first applied an entry after index, as
// far as the samples tell (the oldest sample's time when they all are
// newer). Caller holds mu.
func (t *lagTracker) since(index uint64, now time.Time) time.Time {
	n := len(t.samples)
	at := func(i int) lagSample { return t.samples[(t.head+i)%n] }
	i := sort.Search(n, func(i int) bool { return at(i).index > index })
	if i == n {
		return now
	}
	if i > 0 { // the entry after index was applied between samples i-1 and i
		return at(i - 1).at
	}
	return at(0).at
}

// serveLag records a follower's report and answers whether it must resync.
func (s *Store) serveLag(w http.ResponseWriter, r *http.Request) error {
	var rep lagReport
	if err := decodeBody(r, &rep); err != nil || rep.ID == "" {
		return httpx.Errorf(http.StatusBadRequest, "bad lag report")
	}
	if !s.IsLeader() {
		return kv.ErrNotLeader
	}
	httpx.WriteJSON(w, http.StatusOK, s.recordLag(rep, time.Now()))
	return nil
}

func (s *Store) recordLag(rep lagReport, now time.Time) lagAnswer {
	applied := s.Revision()
	t := &s.lag
	t.mu.Lock()
	defer t.mu.Unlock()
	if term := s.raft.CurrentTerm(); t.term != term {
		t.term, t.members, t.samples, t.head = term, map[string]*MemberLag{}, nil, 0
	}
	t.sample(applied, now)
	m := t.members[rep.ID]
	if m == nil {
		m = &MemberLag{ID: rep.ID}
		t.members[rep.ID] = m
	}
	m.Applied, m.LastReport = rep.Applied, now
	ans := lagAnswer{Applied: applied}
	if (s.cfg.ResyncLagEntries > 0 && applied > rep.Applied && applied-rep.Applied > s.cfg.ResyncLagEntries) || t.resync[rep.ID] {
		ans.Resync = true
		m.Resyncs++
		s.m.resyncSignals.WithLabelValues(rep.ID).Inc()
		delete(t.resync, rep.ID)
		s.log.Warn("member lags: told to resync", "lagging", rep.ID, "applied", rep.Applied, "leaderApplied", applied)
	}
	return ans
}

// Lag returns every member's lag as this member sees it as the leader
// (kv.ErrNotLeader otherwise), ordered by ID.
func (s *Store) Lag() ([]MemberLag, error) {
	if !s.IsLeader() {
		return nil, kv.ErrNotLeader
	}
	cf := s.raft.GetConfiguration()
	if err := s.await(cf); err != nil {
		return nil, mapRaftError(err)
	}
	applied, now := s.Revision(), time.Now()
	t := &s.lag
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sample(applied, now)
	var out []MemberLag
	for _, srv := range cf.Configuration().Servers {
		id := string(srv.ID)
		l := MemberLag{ID: id, Applied: applied}
		if m := t.members[id]; id != s.cfg.ID && m != nil && t.term == s.raft.CurrentTerm() {
			l = *m
			if applied > m.Applied {
				l.Entries = applied - m.Applied
				l.Seconds = now.Sub(t.since(m.Applied, now)).Seconds()
			}
		} else if id != s.cfg.ID { // no report yet in this term
			l.Applied, l.Entries = 0, applied
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// RequestResync makes the leader tell member id to resync at its next
// report.
func (s *Store) RequestResync(id string) error {
	if !s.IsLeader() {
		return kv.ErrNotLeader
	}
	if !s.inConfiguration(id) {
		return &refusedError{"raftstore: no member " + id}
	}
	s.lag.mu.Lock()
	defer s.lag.mu.Unlock()
	if s.lag.resync == nil {
		s.lag.resync = map[string]bool{}
	}
	s.lag.resync[id] = true
	return nil
}

func (s *Store) inConfiguration(id string) bool {
	cf := s.raft.GetConfiguration()
	if s.await(cf) != nil {
		return false
	}
	for _, srv := range cf.Configuration().Servers {
		if srv.ID == raft.ServerID(id) {
			return true
		}
	}
	return false
}

// reportLag runs on every member: as a follower it reports to the leader
// every LagReportInterval and resyncs when told to. It also logs when this
// member finds itself removed from the configuration (and stops
// reporting then).
func (s *Store) reportLag(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	removed := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		t.Reset(s.cfg.LagReportInterval)
		if r := s.Removed(); r != removed {
			removed = r
			if r {
				s.log.Warn("not in the Raft configuration: this member was removed from the cluster; it is not ready and never leads (stop it, or add it back)")
			} else {
				s.log.Info("in the Raft configuration again")
			}
		}
		if _, self, ok := s.Leader(); !ok || self || removed {
			if !ok && !removed {
				// A member starting, or between leaders: report as soon
				// as it knows the leader, not an interval later (a
				// restarted follower is not ready until it has).
				t.Reset(lagLeaderPoll)
			}
			continue
		}
		var ans lagAnswer
		rctx, cancel := context.WithTimeout(ctx, s.cfg.LagReportInterval+readIndexTimeout)
		err := s.callLeader(rctx, http.MethodPost, pathLag, lagReport{ID: s.cfg.ID, Applied: s.Revision()}, &ans)
		cancel()
		if err != nil {
			continue // no leader reachable now: the next tick tries again
		}
		if ans.Resync {
			s.resync(ctx, ans.Applied)
			t.Reset(0) // caught up: report now, and be ready once the leader agrees
			continue
		}
		s.fence.mu.Lock()
		s.fence.caughtUp = time.Now()
		s.fence.mu.Unlock()
	}
}

// lagLeaderPoll is how often a follower that knows no leader looks for
// one to report its lag to.
const lagLeaderPoll = 50 * time.Millisecond

// fence is a follower's resync state.
type fence struct {
	mu     sync.Mutex // guards target and caughtUp
	target uint64     // fenced until applied >= target; 0: not fenced
	// caughtUp is when the leader last answered a report of this member
	// without telling it to resync.
	caughtUp time.Time
}

// Fenced reports whether this member is resyncing.
func (s *Store) Fenced() bool {
	s.fence.mu.Lock()
	defer s.fence.mu.Unlock()
	return s.fence.target != 0
}

// caughtUp reports whether, as a follower, the leader said lately that
// this member is not lagging: within the last few report intervals (a
// member that was paused, or cut off, is not caught up until the leader
// says so again).
func (s *Store) caughtUp() bool {
	s.fence.mu.Lock()
	defer s.fence.mu.Unlock()
	return s.fence.target == 0 && time.Since(s.fence.caughtUp) < max(4*s.cfg.LagReportInterval, 2*time.Second)
}

// resync fences this member until it applied target: it ends every watch
// with ErrExpired, then waits for the apply loop to reach target.
func (s *Store) resync(ctx context.Context, target uint64) {
	s.fence.mu.Lock()
	s.fence.target = max(target, 1)
	s.fence.mu.Unlock()
	s.log.Warn("resyncing: not ready, watches ended", "applied", s.Revision(), "target", target)
	s.m.resyncs.Inc()
	s.fsm.mu.Lock()
	s.m.expiredResync.Add(float64(s.fsm.feed.endAll(kv.ErrExpired)))
	s.fsm.mu.Unlock()
	err := s.fsm.waitApplied(ctx, target)
	s.fence.mu.Lock()
	s.fence.target = 0
	s.fence.mu.Unlock()
	if err == nil {
		s.log.Info("resynced: ready", "applied", s.Revision())
	}
}
