package adminapi

import (
	"time"

	"github.com/litek8s/litek8s/internal/version"
)

// Paths of the admin API (see the package doc for what each answers).
const (
	PathStatus     = "/admin/v1/status"
	PathMembers    = "/admin/v1/members"
	PathLag        = "/admin/v1/lag"
	PathTransfer   = "/admin/v1/leader/transfer"
	PathKubeconfig = "/admin/v1/kubeconfig"
	PathSnapshot   = "/admin/v1/snapshot"
	PathCerts      = "/admin/v1/certs"
	PathCertRotate = "/admin/v1/certs/rotate"
	PathReencrypt  = "/admin/v1/encryption/reencrypt"
)

// QueryLocal=true asks GET /admin/v1/members for the view of the member
// asked instead of the leader's (a follower relays to the leader
// otherwise): what `ctl status` shows while no leader answers.
const QueryLocal = "local"

// ReencryptResult answers POST /admin/v1/encryption/reencrypt: the objects
// rewritten with the current first encryption key, per resource, the
// revision after them, and per member the index its Raft snapshot covers.
type ReencryptResult struct {
	Rewritten map[string]int    `json:"rewritten"`
	Index     uint64            `json:"index"`
	Snapshots map[string]uint64 `json:"snapshots"`
	// Error names the members that did not snapshot (run it again).
	Error string `json:"error,omitempty"`
}

// Status is one member's own view, GET /admin/v1/status.
type Status struct {
	ID       string `json:"id"`
	APIURL   string `json:"apiURL"`
	RaftAddr string `json:"raftAddr"`
	// Role is Raft's state: Leader, Follower, Candidate or Shutdown.
	Role         string `json:"role"`
	Term         uint64 `json:"term"`
	AppliedIndex uint64 `json:"appliedIndex"`
	CommitIndex  uint64 `json:"commitIndex"`
	LastLogIndex uint64 `json:"lastLogIndex"`
	// SnapshotIndex is the index of the member's latest Raft snapshot.
	SnapshotIndex uint64 `json:"snapshotIndex"`
	LeaderID      string `json:"leaderID"`
	Ready         bool   `json:"ready"`
	// Resyncing is true while the member catches up after the leader told
	// it to resync (it is not ready meanwhile).
	Resyncing bool `json:"resyncing"`
	// Removed is true when the member is not in the Raft configuration it
	// knows: it was removed from the cluster (it is not ready).
	Removed bool   `json:"removed,omitempty"`
	Version string `json:"version"`
	// Build is the member binary's version, commit, build date, Go version
	// and platform (absent from members older than it).
	Build *version.Info `json:"build,omitempty"`
}

// MemberInfo is one member of the Raft configuration.
type MemberInfo struct {
	ID       string `json:"id"`
	RaftAddr string `json:"raftAddr"`
	// APIURL is empty until the member's addresses are recorded.
	APIURL string `json:"apiURL"`
	// Suffrage is Voter or Nonvoter.
	Suffrage string `json:"suffrage"`
	Leader   bool   `json:"leader"`
}

// MemberList is the Raft configuration, GET /admin/v1/members.
type MemberList struct {
	Members []MemberInfo `json:"members"`
	// Removed lists the members no longer in the configuration with why
	// and when they were removed (by an administrator, or as dead by the
	// leader's dead-member cleanup), until they are added again.
	Removed []RemovedMember `json:"removed,omitempty"`
}

// RemovedMember is a member removed from the configuration.
type RemovedMember struct {
	ID     string    `json:"id"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// AddMemberRequest is the body of POST /admin/v1/members. Suffrage is
// Voter (the default) or Nonvoter.
type AddMemberRequest struct {
	ID       string `json:"id"`
	RaftAddr string `json:"raftAddr"`
	APIURL   string `json:"apiURL"`
	Suffrage string `json:"suffrage,omitempty"`
}

// TransferRequest is the optional body of POST /admin/v1/leader/transfer:
// the voter to hand leadership to, or any when ID is empty.
type TransferRequest struct {
	ID string `json:"id,omitempty"`
}

// LeaderInfo names the leader after a transfer.
type LeaderInfo struct {
	ID     string `json:"id"`
	APIURL string `json:"apiURL"`
}

// MemberLag is one member's lag as the leader sees it from the applied
// indexes the followers report.
type MemberLag struct {
	ID string `json:"id"`
	// Applied is the member's applied index at its last report (the
	// leader's own for the leader; 0 before its first report this term).
	Applied uint64 `json:"applied"`
	// Entries is how many entries the leader applied that the member had
	// not at its last report; Seconds how long ago the leader applied the
	// oldest of them.
	Entries uint64  `json:"entries"`
	Seconds float64 `json:"seconds"`
	// LastReport is when the member last reported (absent: not this term).
	LastReport *time.Time `json:"lastReport,omitempty"`
	// Resyncs counts the resync signals sent to it this term.
	Resyncs int `json:"resyncs"`
}

// LagList is every member's lag, GET /admin/v1/lag.
type LagList struct {
	Members []MemberLag `json:"members"`
}

// Error is the body of every admin error.
type Error struct {
	Error string `json:"error"`
}
