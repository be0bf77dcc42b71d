package raftstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/kv"
)

func TestDeadMembersDecision(t *testing.T) {
	now := time.Unix(10000, 0)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	v := func(id string, last time.Duration) memberContact {
		return memberContact{ID: id, Voter: true, LastContact: ago(last)}
	}
	nv := func(id string, last time.Duration) memberContact {
		return memberContact{ID: id, LastContact: ago(last)}
	}
	const timeout = time.Minute
	for _, tc := range []struct {
		name      string
		members   []memberContact
		timeout   time.Duration
		minQuorum int
		want      []string
	}{
		{"all alive", []memberContact{v("a", 0), v("b", time.Second), v("c", 59*time.Second)}, timeout, 3, nil},
		{"disabled", []memberContact{v("a", 0), v("b", 0), v("c", 0), v("d", time.Hour), v("e", time.Hour)}, 0, 3, nil},
		{"5 to 3", []memberContact{v("a", 0), v("b", 0), v("c", 0), v("d", 2*time.Minute), v("e", time.Hour)}, timeout, 3,
			[]string{"e", "d"}}, // longest unreached first
		{"never below the minimum", []memberContact{v("a", 0), v("b", 0), v("c", time.Hour), v("d", time.Hour)}, timeout, 3,
			[]string{"c"}},
		{"minimum already reached", []memberContact{v("a", 0), v("b", time.Hour), v("c", time.Hour)}, timeout, 3, nil},
		{"minimum 1", []memberContact{v("a", 0), v("b", time.Hour), v("c", 2*time.Hour)}, timeout, 1, []string{"c", "b"}},
		{"never self", []memberContact{v("a", time.Hour), v("b", 0), v("c", 0), v("d", 0)}, timeout, 1, nil},
		{"exactly the timeout is not dead", []memberContact{v("a", 0), v("b", 0), v("c", 0), v("d", timeout)}, timeout, 3, nil},
		{"a dead nonvoter goes whatever the minimum", []memberContact{v("a", 0), v("b", 0), v("c", 0), nv("n", time.Hour)},
			timeout, 3, []string{"n"}},
		{"ties by ID", []memberContact{v("a", 0), v("b", 0), v("c", 0), v("e", time.Hour), v("d", time.Hour)}, timeout, 3,
			[]string{"d", "e"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := deadMembers(tc.members, "a", now, tc.timeout, tc.minQuorum)
			if !slices.Equal(got, tc.want) {
				t.Errorf("deadMembers = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDeadMemberConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		timeout time.Duration
		min     int
		bad     bool
	}{{0, 3, false}, {time.Minute, 3, false}, {-time.Second, 3, true}, {time.Millisecond, 3, true}, {time.Minute, 0, true}} {
		cfg := DefaultConfig()
		cfg.DeadMemberTimeout, cfg.MinQuorum = tc.timeout, tc.min
		if err := cfg.Validate(); (err != nil) != tc.bad {
			t.Errorf("timeout %s, min quorum %d: Validate() = %v, want error %v", tc.timeout, tc.min, err, tc.bad)
		}
	}
}

// voters returns the IDs in member i's configuration.
func (c *testCluster) voters(i int) []string {
	c.t.Helper()
	servers, err := c.store(i).servers()
	if err != nil {
		c.t.Fatal(err)
	}
	var ids []string
	for _, srv := range servers {
		ids = append(ids, string(srv.ID))
	}
	slices.Sort(ids)
	return ids
}

// A 4-member cluster with dead-member cleanup and a minimum of 3 voters:
// a member stops and the leader removes it after the timeout, with its
// reason recorded; then another stops and stays (the minimum), while the
// two survivors, a majority of three, keep the cluster writing.
func TestDeadMemberCleanup(t *testing.T) {
	const timeout = 1500 * time.Millisecond
	c := newTestCluster(t, 4, func(cfg *Config) {
		cfg.LagReportInterval = 50 * time.Millisecond
		cfg.DeadMemberTimeout = timeout
		cfg.MinQuorum = 3
	})
	l := c.WaitLeader()
	first, second := (l+1)%4, (l+2)%4
	firstID, secondID := c.members[first].id, c.members[second].id
	// Nobody is removed while everyone answers, well past the timeout.
	time.Sleep(2 * timeout)
	if got := c.voters(l); len(got) != 4 {
		t.Fatalf("configuration %v while all members run", got)
	}
	c.Stop(first)
	stopped := time.Now()
	eventually(t, 20*time.Second, func() error {
		if got := c.voters(c.WaitLeader(first)); slices.Contains(got, firstID) {
			return fmt.Errorf("configuration %v still holds %s", got, firstID)
		}
		return nil
	})
	if since := time.Since(stopped); since < timeout {
		t.Errorf("%s removed %s after it stopped, before the timeout %s", firstID, since, timeout)
	}
	c.Stop(second)
	time.Sleep(3 * timeout)
	l = c.WaitLeader(first, second)
	if got := c.voters(l); len(got) != 3 || !slices.Contains(got, secondID) {
		t.Fatalf("configuration %v, want 3 voters with %s (min quorum)", got, secondID)
	}
	rs, err := c.store(l).Removals()
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].ID != firstID || !strings.Contains(rs[0].Reason, "dead") || rs[0].At.IsZero() {
		t.Fatalf("removals %+v, want one of %s with a reason", rs, firstID)
	}
	c.propose(cmWrite(kv.OpCreate, "ns", "after-cleanup", 0))
}

// A member removed from the configuration says so: Removed in its status,
// not ready; the others do not.
func TestRemovedMemberKnowsIt(t *testing.T) {
	c := newTestCluster(t, 3, func(cfg *Config) { cfg.LagReportInterval = 50 * time.Millisecond })
	l := c.WaitLeader()
	gone := (l + 1) % 3
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := c.store(l).RemoveMember(ctx, c.members[gone].id); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		st := c.store(gone).Status()
		if !st.Removed || c.store(gone).Ready() {
			return fmt.Errorf("removed member: status %+v, ready %v", st, c.store(gone).Ready())
		}
		return nil
	})
	for i := range c.members {
		if i != gone && c.store(i).Status().Removed {
			t.Errorf("%s says it is removed", c.members[i].id)
		}
	}
	rs, err := c.store(l).Removals()
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].ID != c.members[gone].id || rs[0].Reason != "removed by an administrator" {
		t.Fatalf("removals %+v", rs)
	}
}
