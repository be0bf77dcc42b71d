package raftstore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/kv"
)

// The leader tracks each member's lag from their reports; a stopped member
// shows as lagging in entries and seconds; a member told to resync ends its
// watches with ErrExpired and becomes ready again once caught up.
func TestLagAndResync(t *testing.T) {
	c := newTestCluster(t, 3, func(cfg *Config) {
		cfg.LagReportInterval = 50 * time.Millisecond
		cfg.ResyncLagEntries = 0 // only when asked
	})
	l := c.WaitLeader()
	f, stopped := (l+1)%3, (l+2)%3
	for i := range 5 {
		c.propose(cmWrite(kv.OpCreate, "ns", fmt.Sprintf("a%d", i), 0))
	}
	eventually(t, 10*time.Second, func() error {
		lag, err := c.store(l).Lag()
		if err != nil {
			return err
		}
		for _, m := range lag {
			if m.Entries != 0 {
				return fmt.Errorf("member %s lags %d entries", m.ID, m.Entries)
			}
		}
		return nil
	})

	c.Stop(stopped)
	for i := range 30 {
		c.propose(cmWrite(kv.OpCreate, "ns", fmt.Sprintf("b%d", i), 0))
	}
	eventually(t, 10*time.Second, func() error {
		lag, err := c.store(l).Lag()
		if err != nil {
			return err
		}
		for _, m := range lag {
			switch {
			case m.ID == c.members[stopped].id && (m.Entries < 30 || m.Seconds <= 0):
				return fmt.Errorf("stopped member: %+v", m)
			case m.ID != c.members[stopped].id && m.Entries != 0:
				return fmt.Errorf("running member lags: %+v", m)
			}
		}
		return nil
	})
	if _, err := c.store(f).Lag(); !errors.Is(err, kv.ErrNotLeader) {
		t.Errorf("Lag on a follower: %v, want ErrNotLeader", err)
	}

	w, err := c.store(f).Watch("configmaps", "", c.store(f).Revision())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := c.store(l).RequestResync("nobody"); !errors.Is(err, ErrRefused) {
		t.Errorf("resync of an unknown member: %v", err)
	}
	if err := c.store(l).RequestResync(c.members[f].id); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.Ready():
		if evs, open := w.Take(nil); open || len(evs) > 0 {
			t.Fatalf("%d events (open %v) instead of the end of the watch", len(evs), open)
		}
		if !errors.Is(w.Err(), kv.ErrExpired) {
			t.Fatalf("watch ended with %v, want ErrExpired", w.Err())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the resyncing member kept its watch")
	}
	eventually(t, 10*time.Second, func() error {
		if !c.store(f).Ready() || c.store(f).Status().Resyncing {
			return errors.New("not ready after resync")
		}
		return nil
	})
	lag, err := c.store(l).Lag()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range lag {
		if want := map[bool]int{true: 1}[m.ID == c.members[f].id]; m.Resyncs != want {
			t.Errorf("%s told to resync %d times, want %d", m.ID, m.Resyncs, want)
		}
	}
}

// checkNoLag waits until every running member has applied everything the
// leader has committed, as its Status says, and the leader sees no lag.
func (c *testCluster) checkNoLag(within time.Duration) {
	c.t.Helper()
	eventually(c.t, within, func() error {
		l := c.WaitLeader()
		commit := c.store(l).Status().CommitIndex
		for _, i := range c.running() {
			if st := c.store(i).Status(); st.AppliedIndex < commit {
				return fmt.Errorf("%s (%s): applied %d, leader's commit %d", c.members[i].id, st.Role, st.AppliedIndex, commit)
			}
		}
		lag, err := c.store(l).Lag()
		if err != nil {
			return err
		}
		for _, m := range lag {
			if m.Entries != 0 {
				return fmt.Errorf("leader sees %s lag %d entries", m.ID, m.Entries)
			}
		}
		return nil
	})
}

// Issue 19: after an election (a leadership transfer) or a join on an idle
// cluster, no member shows a lag: the new leader's no-op and Barrier
// entries carry nothing to apply. Nothing is written meanwhile.
func TestNoPhantomLag(t *testing.T) {
	c := newTestCluster(t, 3, func(cfg *Config) { cfg.LagReportInterval = 50 * time.Millisecond })
	c.propose(cmWrite(kv.OpCreate, "ns", "a", 0))
	c.checkNoLag(5 * time.Second)
	for range 2 {
		l := c.WaitLeader()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		_, err := c.store(l).TransferLeadership(ctx, "")
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		c.checkNoLag(2 * time.Second)
	}
	// The check passed with entries after the revision: the new leader's
	// no-op and Barrier, which the FSM never sees.
	if l := c.WaitLeader(); c.store(l).Status().CommitIndex == c.store(l).Revision() {
		t.Fatalf("commit index equals the revision %d: the test did not exercise entries with nothing to apply",
			c.store(l).Revision())
	}

	// a fourth member joins, then nothing more happens
	m := &testMember{id: "m3", dir: filepath.Join(t.TempDir(), "m3"), raftAddr: "127.0.0.1:0", apiAddr: "127.0.0.1:0"}
	c.members = append(c.members, m)
	c.start(m)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := m.store.Join(ctx, c.members[c.WaitLeader()].url); err != nil {
		t.Fatal(err)
	}
	c.checkNoLag(5 * time.Second)
}

// A follower reports its lag as soon as it knows the leader, not a report
// interval later: a started member is ready as soon as the leader agrees
// it is caught up (a restarted one took up to 0.5 s more).
func TestReadyWithoutWaitingForTheReportInterval(t *testing.T) {
	c := newTestCluster(t, 3, func(cfg *Config) { cfg.LagReportInterval = time.Minute })
	ready := func(i int) func() error {
		return func() error {
			if !c.store(i).Ready() {
				return fmt.Errorf("member %d not ready", i)
			}
			return nil
		}
	}
	for i := range 3 {
		eventually(t, 5*time.Second, ready(i))
	}
	l := c.WaitLeader()
	f := (l + 1) % 3
	c.Stop(f)
	for i := range 20 {
		c.propose(cmWrite(kv.OpCreate, "ns", fmt.Sprintf("a%d", i), 0))
	}
	c.start(c.members[f])
	eventually(t, 5*time.Second, ready(f))
}
