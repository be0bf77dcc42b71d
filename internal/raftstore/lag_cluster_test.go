package raftstore

import (
	"errors"
	"fmt"
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
	case _, open := <-w.Events():
		if open {
			t.Fatal("an event instead of the end of the watch")
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
