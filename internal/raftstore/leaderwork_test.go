package raftstore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/litek8s/litek8s/internal/kv"
)

// leaderRuns records the runs of RunAsLeader functions, per member, and
// the violations of its contract it sees.
type leaderRuns struct {
	mu      sync.Mutex
	running map[int]int // member → runs in progress
	runs    map[int]int // member → runs started
	errs    []error
}

func newLeaderRuns() *leaderRuns {
	return &leaderRuns{running: make(map[int]int), runs: make(map[int]int)}
}

// fn returns the function member i registers: it checks, when it starts,
// that no other run of member i is in progress, that the member is ready
// as leader (after its Barrier) and that marker (when set) is applied
// locally, then waits for its context.
func (r *leaderRuns) fn(i int, s *Store, marker *kv.Key) func(ctx context.Context) {
	return func(ctx context.Context) {
		r.mu.Lock()
		if r.running[i] > 0 {
			r.errs = append(r.errs, fmt.Errorf("member %d: two runs at once", i))
		}
		r.running[i]++
		r.runs[i]++
		r.mu.Unlock()
		ready := s.leaderReady()
		select {
		case <-ready:
		default:
			r.fail(fmt.Errorf("member %d: run started before the Barrier (ready %v)", i, ready))
		}
		if marker != nil {
			if obj, _ := s.fsm.get(*marker); obj == nil {
				r.fail(fmt.Errorf("member %d: run started before %v (written in an earlier term) was applied", i, *marker))
			}
		}
		<-ctx.Done()
		r.mu.Lock()
		r.running[i]--
		r.mu.Unlock()
	}
}

func (r *leaderRuns) fail(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
}

// only returns nil when member i, and no other, has a run in progress
// (i < 0: none has).
func (r *leaderRuns) only(i int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for m, n := range r.running {
		if m != i && n != 0 {
			return fmt.Errorf("member %d has %d runs in progress, want only member %d", m, n, i)
		}
	}
	if i >= 0 && r.running[i] != 1 {
		return fmt.Errorf("member %d has %d runs in progress, want 1", i, r.running[i])
	}
	return nil
}

// inProgress returns the runs of member i in progress.
func (r *leaderRuns) inProgress(i int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running[i]
}

func (r *leaderRuns) started(i int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runs[i]
}

func (r *leaderRuns) check(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, err := range r.errs {
		t.Error(err)
	}
}

// registration is one RunAsLeader call in progress.
type registration struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func register(s *Store, fn func(context.Context)) *registration {
	ctx, cancel := context.WithCancel(context.Background())
	r := &registration{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		s.RunAsLeader(ctx, fn)
	}()
	return r
}

// stop ends the registration and waits for RunAsLeader to return.
func (r *registration) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case <-r.done:
	case <-time.After(5 * time.Second):
		t.Fatal("RunAsLeader did not return within 5s of its context's end")
	}
}

func TestRunAsLeaderFollowsLeadership(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	runs := newLeaderRuns()
	marker := cmKey("ns", "marker")
	regs := make([]*registration, 3)
	for i := range 3 {
		regs[i] = register(c.store(i), runs.fn(i, c.store(i), nil))
	}
	t.Cleanup(func() {
		for _, r := range regs {
			if r != nil {
				r.stop(t)
			}
		}
	})

	old := c.WaitLeader()
	eventually(t, 5*time.Second, func() error { return runs.only(old) })
	c.propose(cmWrite(kv.OpCreate, "ns", "marker", 0))

	// Stopping the leader cancels its run, and Close waits for it. (A
	// member elected meanwhile, or handed leadership by Close, may have
	// started its own run already.)
	c.Stop(old)
	if n := runs.inProgress(old); n != 0 {
		t.Fatalf("after the old leader's Close: it has %d runs in progress, want 0", n)
	}
	regs[old].stop(t)
	regs[old] = nil

	// The new leader runs the work once its Barrier has applied the
	// marker written in the old term. (Runs registered before the marker
	// was written do not check it; register a second function that does.)
	nl := c.WaitLeader(old)
	eventually(t, 5*time.Second, func() error { return runs.only(nl) })
	runs2 := newLeaderRuns()
	second := register(c.store(nl), runs2.fn(nl, c.store(nl), &marker))
	// Already leading: the new registration starts at once.
	eventually(t, 5*time.Second, func() error { return runs2.only(nl) })
	second.stop(t)
	if err := runs2.only(-1); err != nil {
		t.Errorf("after RunAsLeader returned: %v", err)
	}

	// A leadership transfer ends the run on the member that stays up.
	if err := c.store(nl).raft.LeadershipTransfer().Error(); err != nil {
		t.Fatalf("leadership transfer: %v", err)
	}
	next := c.WaitLeader(nl, old)
	eventually(t, 5*time.Second, func() error { return runs.only(next) })
	// ...and a transfer back runs it there again: a new run, after the
	// member's previous one returned (checked by fn).
	before := runs.started(nl)
	id, addr := raft.ServerID(c.members[nl].id), raft.ServerAddress(c.store(nl).RaftAddr())
	eventually(t, 10*time.Second, func() error {
		if l := c.WaitLeader(); l != nl {
			return c.store(l).raft.LeadershipTransferToServer(id, addr).Error()
		}
		return nil
	})
	eventually(t, 5*time.Second, func() error { return runs.only(nl) })
	if got := runs.started(nl); got != before+1 {
		t.Errorf("member %d: %d runs after leading again, want %d", nl, got, before+1)
	}
	runs.check(t)
}
