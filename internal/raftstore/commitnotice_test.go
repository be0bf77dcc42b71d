package raftstore

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/litek8s/litek8s/internal/kv"
)

// TestFollowersApplyWithoutWaitingForCommitTimeout: with a CommitTimeout of
// 3 s, Raft alone would tell the followers that a lone write committed 3-6 s
// later (its heartbeats carry no commit index); the leader's commit notices
// make them apply it at once.
func TestFollowersApplyWithoutWaitingForCommitTimeout(t *testing.T) {
	c := newTestCluster(t, 3, func(cfg *Config) { cfg.CommitTimeout = 3 * time.Second })
	l := c.WaitLeader()
	for i := range 3 {
		// Let Raft's own AppendEntries of earlier writes go first.
		time.Sleep(100 * time.Millisecond)
		obj := c.propose(cmWrite(kv.OpCreate, "ns", fmt.Sprintf("cm%d", i), 1))
		start := time.Now()
		for _, f := range c.running() {
			if f == l {
				continue
			}
			for c.store(f).Revision() < obj.RV {
				if time.Since(start) > 2*time.Second {
					t.Fatalf("write %d (index %d): member %d applied %d after %v", i, obj.RV, f,
						c.store(f).Revision(), time.Since(start))
				}
				time.Sleep(time.Millisecond)
			}
		}
		t.Logf("write %d: every follower applied index %d %v after the leader", i, obj.RV, time.Since(start))
	}
}

// TestCommitNotice checks which notice the leader sends a follower, from
// what its replication showed.
func TestCommitNotice(t *testing.T) {
	// Atomics: the follower's notice goroutine, woken by appliedUpTo,
	// reads them too.
	var leader atomic.Bool
	var last atomic.Uint64
	leader.Store(true)
	last.Store(10)
	c := newCommitNotices(slog.New(slog.NewTextHandler(io.Discard, nil)))
	c.isLeader = leader.Load
	c.lastIndex = last.Load
	c.send = func(raft.ServerID, raft.ServerAddress, *raft.AppendEntriesRequest, *raft.AppendEntriesResponse) error {
		return errors.New("not sent")
	}
	defer c.close()
	hdr := raft.RPCHeader{ID: []byte("m0"), Addr: []byte("a0")}
	// The follower stored entries 9 and 10 (term 2), told commit 8.
	c.observe("m1", "a1", &raft.AppendEntriesRequest{RPCHeader: hdr, Term: 2, PrevLogEntry: 8, PrevLogTerm: 2,
		Entries: []*raft.Log{{Index: 9, Term: 2}, {Index: 10, Term: 2}}, LeaderCommitIndex: 8},
		&raft.AppendEntriesResponse{Success: true})
	p := c.peers["m1"]
	check := func(want string) {
		t.Helper()
		n, ok := c.notice(p)
		got := "none"
		if ok {
			got = fmt.Sprintf("term %d prev %d/%d commit %d", n.req.Term, n.req.PrevLogEntry, n.req.PrevLogTerm,
				n.req.LeaderCommitIndex)
		}
		if got != want {
			t.Errorf("notice = %s, want %s", got, want)
		}
	}
	check("none") // nothing applied yet
	c.appliedUpTo(9, 2)
	last.Store(11)
	check("none") // entry 11 waits: Raft's next AppendEntries carries the commit
	last.Store(10)
	check("none") // entry 10 is not committed yet
	c.appliedUpTo(10, 2)
	check("term 2 prev 10/2 commit 10")
	leader.Store(false)
	check("none")
	leader.Store(true)
	// Raft's replication told it commit 10.
	c.observe("m1", "a1", &raft.AppendEntriesRequest{RPCHeader: hdr, Term: 2, PrevLogEntry: 10, PrevLogTerm: 2,
		LeaderCommitIndex: 10}, &raft.AppendEntriesResponse{Success: true})
	check("none")
	// A heartbeat (no index) and a failed append change nothing.
	c.observe("m1", "a1", &raft.AppendEntriesRequest{RPCHeader: hdr, Term: 2}, &raft.AppendEntriesResponse{Success: true})
	c.observe("m1", "a1", &raft.AppendEntriesRequest{RPCHeader: hdr, Term: 2, PrevLogEntry: 12, PrevLogTerm: 2,
		Entries: []*raft.Log{{Index: 13, Term: 2}}}, &raft.AppendEntriesResponse{})
	c.appliedUpTo(13, 2)
	last.Store(13)
	check("none") // the follower was not shown to hold 11-13
	// A new term forgets what the old one showed.
	c.observe("m1", "a1", &raft.AppendEntriesRequest{RPCHeader: hdr, Term: 3}, &raft.AppendEntriesResponse{Success: true})
	c.observe("m1", "a1", &raft.AppendEntriesRequest{RPCHeader: hdr, Term: 3, PrevLogEntry: 12, PrevLogTerm: 2,
		Entries: []*raft.Log{{Index: 13, Term: 3}}, LeaderCommitIndex: 12}, &raft.AppendEntriesResponse{Success: true})
	check("term 3 prev 13/3 commit 13")
	// A follower that fails an append (its log was replaced) gets no more
	// notices until an append succeeds.
	c.observe("m1", "a1", &raft.AppendEntriesRequest{RPCHeader: hdr, Term: 3, PrevLogEntry: 13, PrevLogTerm: 3,
		LeaderCommitIndex: 13}, &raft.AppendEntriesResponse{})
	c.appliedUpTo(14, 3)
	last.Store(14)
	check("none")
	c.observe("m1", "a1", &raft.AppendEntriesRequest{RPCHeader: hdr, Term: 3, PrevLogEntry: 13, PrevLogTerm: 3,
		Entries: []*raft.Log{{Index: 14, Term: 3}}, LeaderCommitIndex: 13}, &raft.AppendEntriesResponse{Success: true})
	check("term 3 prev 14/3 commit 14")
}
