package raftstore

import (
	"log/slog"
	"sync"

	"github.com/hashicorp/raft"
)

// commitNotices tells followers at once that entries they hold are
// committed, so that a watch held on a follower sees a write as soon as
// the leader has committed it.
//
// hashicorp/raft tells a follower the commit index only in its next
// AppendEntries: the one carrying a new entry, or, once writes stop, one
// sent CommitTimeout to twice CommitTimeout after the last (its heartbeats
// carry no commit index). A single write was therefore applied on the
// followers 2-4 ms after the leader committed it, and a lower CommitTimeout
// costs idle CPU: that many more RPCs every second, writes or not.
//
// As leader, after the FSM applied index N, the store sends each follower
// whose replication shows it holds entry P (its match index, P ≤ N) the
// AppendEntries Raft would send for it: PrevLogEntry P with the leader's
// term of P, no entries, LeaderCommitIndex P. The follower verifies that its
// entry P has that term (then by Raft's Log Matching property its log equals
// the leader's up to P) and commits and applies up to P, exactly as for
// Raft's own message. It is sent only when it tells the follower something
// new (P above every commit index it was sent), only when no newer entry is
// waiting to be replicated (Raft's next AppendEntries is then on its way
// and carries the commit index: no extra RPCs under write load), never when
// nothing commits (no idle cost), and at most one per follower at a time.
type commitNotices struct {
	log  *slog.Logger
	send func(raft.ServerID, raft.ServerAddress, *raft.AppendEntriesRequest, *raft.AppendEntriesResponse) error

	mu sync.Mutex
	// isLeader and lastIndex (the leader's last log index) are Raft's
	// (useRaft); nil before Raft started.
	isLeader  func() bool
	lastIndex func() uint64
	// applied and appliedTerm: the leader's last applied entry.
	applied, appliedTerm uint64
	peers                map[raft.ServerID]*noticePeer
	closed               bool
	done                 chan struct{}
	wg                   sync.WaitGroup
}

// noticePeer is what the leader's replication showed of one follower, in
// the leader's term `term`. id and wake never change; the rest is guarded by
// commitNotices.mu.
type noticePeer struct {
	id   raft.ServerID
	wake chan struct{}

	addr   raft.ServerAddress
	header raft.RPCHeader
	leader []byte
	term   uint64
	// match and matchTerm: the follower's log equals the leader's up to
	// match, whose term is matchTerm.
	match, matchTerm uint64
	// commit: the highest commit index the follower was told.
	commit uint64
}

func newCommitNotices(log *slog.Logger) *commitNotices {
	return &commitNotices{log: log, peers: map[raft.ServerID]*noticePeer{}, done: make(chan struct{})}
}

// useRaft makes c ask r whether this member leads and for its last index.
func (c *commitNotices) useRaft(r *raft.Raft) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.isLeader = func() bool { return r.State() == raft.Leader }
	c.lastIndex = r.LastIndex
}

// observe records a completed AppendEntries the leader sent (Raft's
// replication and heartbeats, and the notices).
func (c *commitNotices) observe(id raft.ServerID, addr raft.ServerAddress, args *raft.AppendEntriesRequest,
	resp *raft.AppendEntriesResponse) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if !resp.Success {
		// The follower's log differs from what it showed (its data dir
		// was replaced, say): no notices until Raft's replication
		// succeeds again.
		if p := c.peers[id]; p != nil && args.Term == p.term {
			p.match, p.matchTerm = 0, 0
		}
		return
	}
	p := c.peers[id]
	if p == nil {
		p = &noticePeer{id: id, wake: make(chan struct{}, 1)}
		c.peers[id] = p
		c.wg.Add(1)
		go func() { defer c.wg.Done(); c.run(p) }()
	}
	switch {
	case args.Term < p.term:
		return
	case args.Term > p.term:
		p.term, p.match, p.matchTerm, p.commit = args.Term, 0, 0, 0
	}
	p.addr, p.header, p.leader = addr, args.RPCHeader, args.Leader
	match, matchTerm := args.PrevLogEntry, args.PrevLogTerm
	if n := len(args.Entries); n > 0 {
		match, matchTerm = args.Entries[n-1].Index, args.Entries[n-1].Term
	}
	if match > p.match {
		p.match, p.matchTerm = match, matchTerm
	}
	// The follower commits min(LeaderCommitIndex, its last index), and its
	// last index is at least match now.
	if told := min(args.LeaderCommitIndex, match); told > p.commit {
		p.commit = told
	}
	if min(c.applied, p.match) > p.commit {
		wake(p.wake)
	}
}

// appliedUpTo records that the FSM applied the entry index of term, and
// wakes the followers' notices if this member leads.
func (c *commitNotices) appliedUpTo(index, term uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if index <= c.applied {
		return
	}
	c.applied, c.appliedTerm = index, term
	if len(c.peers) == 0 || c.isLeader == nil || !c.isLeader() {
		return
	}
	for _, p := range c.peers {
		if min(index, p.match) > p.commit {
			wake(p.wake)
		}
	}
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// run sends p's notices, one at a time.
func (c *commitNotices) run(p *noticePeer) {
	for {
		select {
		case <-c.done:
			return
		case <-p.wake:
		}
		args, ok := c.notice(p)
		if !ok {
			continue
		}
		var resp raft.AppendEntriesResponse
		if err := c.send(p.id, args.addr, &args.req, &resp); err != nil {
			c.log.Debug("commit notice", "peer", p.id, "err", err)
		}
	}
}

type notice struct {
	addr raft.ServerAddress
	req  raft.AppendEntriesRequest
}

// notice returns the AppendEntries that tells p what is committed, if it
// tells p something new and Raft's replication will not tell it soon.
func (c *commitNotices) notice(p *noticePeer) (notice, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev, prevTerm := p.match, p.matchTerm
	if c.applied < prev {
		prev, prevTerm = c.applied, c.appliedTerm
	}
	if prev <= p.commit || p.term == 0 || c.isLeader == nil || !c.isLeader() || c.lastIndex() > c.applied {
		return notice{}, false
	}
	return notice{addr: p.addr, req: raft.AppendEntriesRequest{RPCHeader: p.header, Term: p.term, Leader: p.leader,
		PrevLogEntry: prev, PrevLogTerm: prevTerm, LeaderCommitIndex: prev}}, true
}

// close stops every follower's notices and waits for them.
func (c *commitNotices) close() {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.done)
	}
	c.mu.Unlock()
	c.wg.Wait()
}
