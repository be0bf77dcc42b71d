package raftstore

import (
	"github.com/prometheus/client_golang/prometheus"
	"net"

	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net/http"
	"time"
)

// Config configures a Store. Start from DefaultConfig.
type Config struct {
	// ID is this member's stable identity in the Raft configuration.
	ID string
	// DataDir holds the Raft log (wal/) and snapshots/.
	DataDir string
	// RaftAddr is the TCP address Raft listens on ("127.0.0.1:0" picks a
	// port); RaftAdvertise, when set, is the address peers dial.
	RaftAddr, RaftAdvertise string
	// APIURL is the https URL of this member's API, where peers forward
	// writes and ask for the read index.
	APIURL string
	// Bootstrap starts a new single-member cluster when DataDir holds no
	// Raft state. A member that joins leaves it false.
	Bootstrap bool
	// Nonvoter makes a joining member ask to join without a vote.
	Nonvoter bool

	// FeedSize is the number of events kept in the change feed: the window
	// from which watches can resume.
	FeedSize int
	// WatchBuffer is how many events a watcher may have waiting (its queue
	// holds only those); a watcher that falls this far behind is ended
	// with ErrExpired.
	WatchBuffer int

	// Raft timings and log compaction. CommitTimeout is how long Raft's
	// replication waits, when no write follows, before sending each
	// follower an AppendEntries anyway (one per follower per 1-2
	// CommitTimeout when idle). Followers no longer wait for it to learn
	// that a write committed: the leader tells them at once (commit
	// notices, commitnotice.go). 50 ms (hashicorp/raft's default): 3 idle
	// members use ~6% of a core; at 2 ms, 30%.
	HeartbeatTimeout, ElectionTimeout, LeaderLeaseTimeout, CommitTimeout time.Duration
	SnapshotThreshold, TrailingLogs                                      uint64
	SnapshotInterval                                                     time.Duration
	// ApplyTimeout bounds how long a proposal waits to be enqueued.
	ApplyTimeout time.Duration
	// LagReportInterval is how often a follower reports its applied index
	// to the leader; ResyncLagEntries is the lag (in entries) past which the
	// leader tells a follower to resync (0: never on its own). See lag.go.
	LagReportInterval time.Duration
	ResyncLagEntries  uint64
	// DeadMemberTimeout, when positive, makes the leader remove a member
	// it has not reached for that long (autopilot.go), as long as at least
	// MinQuorum voters remain. 0 never removes one on its own.
	DeadMemberTimeout time.Duration
	MinQuorum         int

	// Derive computes field-selector values and Table cells at apply time.
	Derive DeriveFunc
	// Transformer, when set, transforms objects (encrypts the resources
	// the encryption configuration lists) before they enter the Raft log,
	// snapshots and backups, and back when applied or restored. nil stores
	// objects as they are.
	Transformer Transformer
	// Peer is the client used for internal calls to other members (read
	// index, join); it must trust their serving certificates and present
	// this member's own certificate.
	Peer *http.Client
	// RaftTLS, when set, carries Raft's traffic over TLS: the listener
	// serves with it and the transport dials with it, so it must hold this
	// member's certificate and verify the other side's in both roles
	// (ClientAuth, VerifyConnection). nil carries Raft in plain TCP, which
	// only this package's tests do.
	RaftTLS *tls.Config
	// SourceIP, when set, is the address Raft's connections to other
	// members come from (over TLS): a test gives each member its own
	// loopback address, so that a fault-injecting proxy can tell them
	// apart.
	SourceIP net.IP
	// Dial, when set, opens Raft's TCP connections to other members
	// instead of a net.Dialer (SourceIP is then its business): a member in
	// Kubernetes reaches peers' names through their Pods' IPs with it.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// PeerAuth authenticates an internal call from another member (read
	// index, join): nil error for a member. nil refuses every such call.
	PeerAuth func(*http.Request) error
	// VerifyJoinToken authenticates the one call a member makes before it
	// is one: fetching JoinSecrets (nil: nobody may). An error refuses the
	// join with its text.
	VerifyJoinToken func(ctx context.Context, token string) error
	// JoinSecrets returns what a joining member receives with its
	// membership (opaque to the store: the cluster's TLS material, tokens).
	JoinSecrets func() ([]byte, error)
	// ClusterID identifies the cluster this member's data belongs to; the
	// unauthenticated hello endpoint reports it, so that a member can tell
	// a fresh peer from one of another cluster.
	ClusterID string
	// ClusterCA is the cluster CA's certificate (PEM), which hello hands
	// out.
	ClusterCA []byte

	// Metrics is where the store registers its collectors (nil: none).
	Metrics prometheus.Registerer

	// RaftLogLevel is hashicorp/raft's own log level (trace, debug, info,
	// warn, error, off); its lines go to Logger.
	RaftLogLevel string
	// PeerDownReminder is how often the leader logs again that a peer it
	// cannot reach is still down (peerstate.go); 0: DefaultPeerDownReminder.
	PeerDownReminder time.Duration

	Logger *slog.Logger
}

// DefaultConfig returns timings suited to members on one LAN.
func DefaultConfig() Config {
	return Config{
		ID:                 "node-1",
		DataDir:            "data",
		RaftAddr:           "127.0.0.1:7000",
		FeedSize:           10000,
		WatchBuffer:        1000,
		HeartbeatTimeout:   500 * time.Millisecond,
		ElectionTimeout:    500 * time.Millisecond,
		LeaderLeaseTimeout: 250 * time.Millisecond,
		CommitTimeout:      50 * time.Millisecond,
		SnapshotThreshold:  8192,
		TrailingLogs:       10240,
		SnapshotInterval:   30 * time.Second,
		ApplyTimeout:       10 * time.Second,
		LagReportInterval:  500 * time.Millisecond,
		ResyncLagEntries:   5000,
		MinQuorum:          3,
		RaftLogLevel:       "warn",
		Logger:             slog.Default(),
	}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	switch {
	case c.ID == "":
		return errors.New("raftstore: ID is required")
	case c.DataDir == "":
		return errors.New("raftstore: DataDir is required")
	case c.RaftAddr == "":
		return errors.New("raftstore: RaftAddr is required")
	case c.FeedSize <= 0 || c.WatchBuffer <= 0:
		return errors.New("raftstore: FeedSize and WatchBuffer must be positive")
	case c.HeartbeatTimeout <= 0 || c.ElectionTimeout <= 0 || c.LeaderLeaseTimeout <= 0:
		return errors.New("raftstore: Raft timeouts must be positive")
	case c.LagReportInterval <= 0:
		return errors.New("raftstore: LagReportInterval must be positive")
	case c.DeadMemberTimeout < 0:
		return errors.New("raftstore: DeadMemberTimeout must not be negative")
	case c.DeadMemberTimeout > 0 && c.DeadMemberTimeout < 2*c.ElectionTimeout:
		return errors.New("raftstore: DeadMemberTimeout must be at least two election timeouts (or 0: never)")
	case c.MinQuorum < 1:
		return errors.New("raftstore: MinQuorum must be at least 1")
	case c.Logger == nil:
		return errors.New("raftstore: Logger is required")
	}
	return nil
}
