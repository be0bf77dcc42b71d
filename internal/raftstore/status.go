package raftstore

import (
	"strconv"

	"github.com/hashicorp/raft"
)

// Status is this member's Raft state, for status pages and `ctl status`.
type Status struct {
	// Role is Leader, Follower, Candidate or Shutdown.
	Role string
	Term uint64
	// AppliedIndex is the index through which this member has applied the
	// log (appliedThrough): the store's revision, or past it when only
	// entries with nothing to apply follow. CommitIndex and LastLogIndex
	// are Raft's.
	AppliedIndex, CommitIndex, LastLogIndex uint64
	// LeaderID is empty while no leader is known.
	LeaderID string
	// SnapshotIndex is the index of this member's latest Raft snapshot:
	// its log holds no entry older than SnapshotIndex - TrailingLogs.
	SnapshotIndex uint64
	// Resyncing is true while the member catches up after the leader told
	// it to (it is not ready meanwhile).
	Resyncing bool
	// Removed is true when this member is not in the Raft configuration it
	// knows (it was removed): it is not ready and never leads again.
	Removed bool
}

// Status returns this member's Raft state.
func (s *Store) Status() Status {
	_, leader := s.raft.LeaderWithID()
	return Status{Role: s.raft.State().String(), Term: s.raft.CurrentTerm(), AppliedIndex: s.appliedThrough(),
		CommitIndex: s.raft.CommitIndex(), LastLogIndex: s.raft.LastIndex(), LeaderID: string(leader),
		Resyncing: s.Fenced(), SnapshotIndex: snapshotIndex(s.raft.Stats()), Removed: s.Removed()}
}

func snapshotIndex(stats map[string]string) uint64 {
	n, _ := strconv.ParseUint(stats["last_snapshot_index"], 10, 64)
	return n
}

// maxSettle bounds how many entries appliedThrough looks at.
const maxSettle = 64

// appliedThrough returns the index through which this member has applied
// the log. The store's revision is the last entry the FSM applied, but
// hashicorp/raft hands the FSM neither a new leader's no-op entry nor the
// Barrier every new leader runs (leader.go), so after an election the
// revision stays a few entries behind the commit index until the next
// write: the phantom lag of issue 19. Such entries carry nothing to apply,
// so the committed ones that directly follow the revision count as
// applied. It reads the log store (a few entries, only when asked; no
// traffic, no timer).
func (s *Store) appliedThrough() uint64 {
	applied, commit := s.Revision(), s.raft.CommitIndex()
	commit = min(commit, applied+maxSettle)
	for i := applied + 1; i <= commit; i++ {
		var l raft.Log
		if s.logs.GetLog(i, &l) != nil || !nothingToApply(l.Type) {
			break
		}
		applied = i
	}
	return applied
}

// nothingToApply reports whether entries of type t never reach the FSM.
func nothingToApply(t raft.LogType) bool {
	return t == raft.LogNoop || t == raft.LogBarrier
}
