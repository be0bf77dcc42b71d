package raftstore

import "strconv"

// Status is this member's Raft state, for status pages and `ctl status`.
type Status struct {
	// Role is Leader, Follower, Candidate or Shutdown.
	Role string
	Term uint64
	// AppliedIndex is the store's revision (the last entry applied to the
	// objects); CommitIndex and LastLogIndex are Raft's.
	AppliedIndex, CommitIndex, LastLogIndex uint64
	// LeaderID is empty while no leader is known.
	LeaderID string
	// SnapshotIndex is the index of this member's latest Raft snapshot:
	// its log holds no entry older than SnapshotIndex - TrailingLogs.
	SnapshotIndex uint64
	// Resyncing is true while the member catches up after the leader told
	// it to (it is not ready meanwhile).
	Resyncing bool
}

// Status returns this member's Raft state.
func (s *Store) Status() Status {
	_, leader := s.raft.LeaderWithID()
	return Status{Role: s.raft.State().String(), Term: s.raft.CurrentTerm(), AppliedIndex: s.Revision(),
		CommitIndex: s.raft.CommitIndex(), LastLogIndex: s.raft.LastIndex(), LeaderID: string(leader),
		Resyncing: s.Fenced(), SnapshotIndex: snapshotIndex(s.raft.Stats())}
}

func snapshotIndex(stats map[string]string) uint64 {
	n, _ := strconv.ParseUint(stats["last_snapshot_index"], 10, 64)
	return n
}
