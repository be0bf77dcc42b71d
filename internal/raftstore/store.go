package raftstore

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/litek8s/litek8s/internal/kv"
	"github.com/litek8s/litek8s/internal/raftlog"
)

// Store is one member's replicated object store.
type Store struct {
	cfg   Config
	log   *slog.Logger
	fsm   *fsm
	raft  *raft.Raft
	trans *raft.NetworkTransport
	logs  *raftlog.Log // Raft's log and stable store
	// leaderReads and remoteReads coalesce read-index requests: as leader
	// (one VerifyLeader round serves every waiting read) and as follower
	// (one call to the leader).
	leaderReads, remoteReads *readIndexer
	// notices tells followers what committed without waiting for Raft's
	// next AppendEntries (commitnotice.go).
	notices *commitNotices

	notify chan bool
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// closing is closed when Close starts (see await).
	closing   chan struct{}
	closeOnce sync.Once

	// mu guards ready: closed once this member, as leader, has applied
	// everything of earlier terms (Barrier) and may answer reads as leader;
	// nil while not leader. It also guards work (the leader-only work of
	// RunAsLeader, leaderwork.go). mu is a leaf lock.
	mu    sync.Mutex
	ready chan struct{}
	work  leaderWork

	lag   lagTracker // as leader: the followers' reports (lag.go)
	fence fence      // as follower: resync in progress (lag.go)
	// removedAt is the index of the configuration entry that removed this
	// member, as the leader told it (0: not told; members.go Removed).
	removedAt atomic.Uint64

	m *metrics
}

// Open opens (or creates) the member's data dir and starts Raft.
func Open(cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("raftstore: data dir: %w", err)
	}
	m, err := newMetrics(cfg.Metrics)
	if err != nil {
		return nil, fmt.Errorf("raftstore: register metrics: %w", err)
	}
	s := &Store{cfg: cfg, log: cfg.Logger.With("member", cfg.ID),
		fsm: newFSM(cfg.Derive, cfg.FeedSize, cfg.WatchBuffer), notify: make(chan bool, 16),
		closing: make(chan struct{}), m: m}
	s.fsm.useMetrics(m)
	s.fsm.tr = cfg.Transformer
	s.leaderReads = newReadIndexer(s.leaderReadIndex)
	s.remoteReads = newReadIndexer(s.remoteReadIndex)
	s.notices = newCommitNotices(s.log)
	s.fsm.onApplied = s.notices.appliedUpTo
	if err := s.openRaft(); err != nil {
		s.closeRaftParts()
		return nil, err
	}
	s.raft.RegisterObserver(raft.NewObserver(nil, false, newPeerWatch(s.log, cfg.PeerDownReminder).observe))
	if err := m.registerState(s); err != nil {
		s.Close()
		return nil, fmt.Errorf("raftstore: register metrics: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.runLeadership(ctx) }()
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.reportLag(ctx) }()
	return s, nil
}

// logCacheSize is how many of the newest log entries are kept in memory
// (about two MaxAppendEntries batches).
const logCacheSize = 512

func (s *Store) openRaft() error {
	hl := hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.LevelFromString(s.cfg.RaftLogLevel),
		Output: slogWriter{s.log}, DisableTime: true})
	logs, err := raftlog.Open(s.cfg.DataDir, raftlog.Options{Logger: hl.Named("log"), Events: s.log,
		Metrics: newWALMetrics()})
	if err != nil {
		return err
	}
	s.logs = logs
	snaps, err := raft.NewFileSnapshotStoreWithLogger(s.cfg.DataDir, 2, hl)
	if err != nil {
		return fmt.Errorf("raftstore: snapshot store: %w", err)
	}
	s.trans, err = s.newTransport(hl)
	if err != nil {
		return fmt.Errorf("raftstore: raft transport: %w", err)
	}
	rc := s.raftConfig(hl)
	existing, err := raft.HasExistingState(logs, logs, snaps)
	if err != nil {
		return fmt.Errorf("raftstore: read raft state: %w", err)
	}
	if s.cfg.Bootstrap && !existing {
		conf := raft.Configuration{Servers: []raft.Server{{ID: rc.LocalID, Address: s.trans.LocalAddr()}}}
		if err := raft.BootstrapCluster(rc, logs, logs, snaps, s.trans, conf); err != nil {
			return fmt.Errorf("raftstore: bootstrap: %w", err)
		}
	}
	// The log cache keeps the newest entries in memory: replication reads
	// the previous entry for every AppendEntries (heartbeats of the commit
	// index included) and the entries it just wrote, which would otherwise
	// each be a read of the segment file and a decode.
	cached, err := raft.NewLogCache(logCacheSize, logs)
	if err != nil {
		return fmt.Errorf("raftstore: log cache: %w", err)
	}
	tr := transport{NetworkTransport: s.trans, notices: s.notices}
	s.notices.send = tr.AppendEntries
	s.raft, err = raft.NewRaft(rc, s.fsm, cached, logs, snaps, tr)
	if err != nil {
		return fmt.Errorf("raftstore: start raft: %w", err)
	}
	s.notices.useRaft(s.raft)
	return nil
}

func (s *Store) raftConfig(hl hclog.Logger) *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(s.cfg.ID)
	rc.Logger = hl
	rc.HeartbeatTimeout = s.cfg.HeartbeatTimeout
	rc.ElectionTimeout = s.cfg.ElectionTimeout
	rc.LeaderLeaseTimeout = s.cfg.LeaderLeaseTimeout
	rc.CommitTimeout = s.cfg.CommitTimeout
	rc.SnapshotThreshold = s.cfg.SnapshotThreshold
	rc.TrailingLogs = s.cfg.TrailingLogs
	if s.cfg.SnapshotInterval > 0 {
		rc.SnapshotInterval = s.cfg.SnapshotInterval
	}
	rc.BatchApplyCh = true
	rc.MaxAppendEntries = 256
	rc.NotifyCh = s.notify
	rc.NoLegacyTelemetry = true // no per-peer metric names (raft_replication_heartbeat_<id>); peer_id labels instead
	return rc
}

// Close stops Raft and every goroutine of the store and ends all watches.
// A leader first hands leadership to another voter (SIGTERM on the leader,
// a rolling restart): the cluster has a new leader at once instead of after
// an election timeout.
func (s *Store) Close() error {
	if s.raft != nil && s.IsLeader() {
		s.transferBeforeClose()
	}
	if s.raft != nil {
		s.snapshotBeforeClose()
	}
	s.closeOnce.Do(func() { close(s.closing) })
	var err error
	if s.raft != nil {
		err = s.raft.Shutdown().Error()
	}
	s.notices.close()
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
	s.leaderReads.close()
	s.remoteReads.close()
	s.closeRaftParts()
	s.fsm.mu.Lock()
	s.fsm.feed.endAll(kv.ErrClosed)
	s.fsm.mu.Unlock()
	return err
}

func (s *Store) closeRaftParts() {
	if s.trans != nil {
		// Close drops neither pooled connections nor the peers' handlers
		// reading them: release the pool so no goroutine is left behind.
		s.trans.CloseStreams()
		s.trans.Close()
	}
	if s.logs != nil {
		s.logs.Close()
	}
}

// RaftAddr returns the address Raft listens on.
func (s *Store) RaftAddr() string { return string(s.trans.LocalAddr()) }

// ID returns this member's ID.
func (s *Store) ID() string { return s.cfg.ID }

// IsLeader reports whether this member is the Raft leader now.
func (s *Store) IsLeader() bool { return s.raft.State() == raft.Leader }

// Revision returns the index of the last entry this member applied.
func (s *Store) Revision() uint64 { return s.fsm.appliedIndex() }

// OldestRevision returns the oldest revision a watch may resume from.
func (s *Store) OldestRevision() uint64 {
	s.fsm.mu.Lock()
	defer s.fsm.mu.Unlock()
	return s.fsm.feed.oldestAvailable()
}

// Snapshot asks Raft to take a snapshot now (and compact its log).
func (s *Store) Snapshot() error { return s.raft.Snapshot().Error() }

// Ready reports whether this member knows a leader, is in the
// configuration and is caught up with the leader: the leader itself, or a
// follower whose latest lag report the leader answered lately without
// telling it to resync (lag.go).
func (s *Store) Ready() bool {
	addr, _ := s.raft.LeaderWithID()
	if addr == "" || s.Removed() {
		return false
	}
	return s.IsLeader() || s.caughtUp()
}

// Stats returns Raft's own statistics (for status pages and tests).
func (s *Store) Stats() map[string]string { return s.raft.Stats() }

var _ io.Closer = (*Store)(nil)

// slogWriter forwards hashicorp/raft's log lines to the member's logger,
// at their level but for the lines demote names.
type slogWriter struct{ log *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	level := slog.LevelWarn
	for prefix, l := range map[string]slog.Level{"[ERROR]": slog.LevelError, "[INFO]": slog.LevelInfo,
		"[DEBUG]": slog.LevelDebug, "[TRACE]": slog.LevelDebug} {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			line, level = strings.TrimSpace(rest), l
		}
	}
	line = strings.TrimSpace(strings.TrimPrefix(line, "[WARN]"))
	level = demote(line, level)
	w.log.Log(context.Background(), level, line, "component", "raft")
	return len(p), nil
}

// perPeerFailures are hashicorp/raft's messages (after "raft: ") for an
// RPC to a peer that failed: as leader it logs them for every heartbeat
// and append to a down peer (hundreds a minute). peerWatch (peerstate.go)
// says instead, once, that the peer is down and when it is back; these go
// to DEBUG. "failed to contact quorum of nodes, stepping down" is no
// per-peer line and keeps its level.
var perPeerFailures = []string{"failed to heartbeat to:", "failed to appendEntries to:", "failed to contact:"}

// closedConn are the errors of a connection the other end (or this
// member's shutdown) closed.
var closedConn = []string{"use of closed network connection", "connection reset by peer", "broken pipe", "EOF",
	"transport shutdown"}

// demote returns the level a raft line is logged at: DEBUG for the
// per-peer failures above, for a vote request to an unreachable peer (two
// a round while a member campaigns without a quorum; raft's "starting
// election" WARN stays) and for an inbound connection that ends because a
// member closed it (a peer's or this member's clean shutdown is no error);
// INFO for a leader that finds a newer term (it was deposed: after its
// own leadership transfer at shutdown, say); the line's own level
// otherwise.
func demote(line string, level slog.Level) slog.Level {
	msg := strings.TrimPrefix(line, "raft: ")
	if strings.HasPrefix(msg, "failed to make requestVote RPC:") {
		return min(level, slog.LevelDebug)
	}
	if strings.HasPrefix(msg, "peer has newer term, stopping replication") {
		return min(level, slog.LevelInfo)
	}
	for _, m := range perPeerFailures {
		if strings.HasPrefix(msg, m) {
			return min(level, slog.LevelDebug)
		}
	}
	if strings.HasPrefix(msg, "failed to decode incoming command:") || strings.HasPrefix(msg, "failed to flush response:") ||
		strings.HasPrefix(msg, "failed to accept connection:") {
		for _, c := range closedConn {
			if strings.Contains(msg, c) {
				return min(level, slog.LevelDebug)
			}
		}
	}
	return level
}

// await returns the outcome of an Apply or Barrier future, or
// ErrRaftShutdown once the store closes: with BatchApplyCh, a future still
// in Raft's apply channel when Raft shuts down is never answered, and its
// Error would block forever. The goroutine left waiting on such a future
// is the price of not hanging Close.
func (s *Store) await(f raft.Future) error {
	errc := make(chan error, 1)
	go func() { errc <- f.Error() }()
	select {
	case err := <-errc:
		return err
	case <-s.closing:
		return raft.ErrRaftShutdown
	}
}

// snapshotBeforeClose takes a snapshot before Raft stops when the log
// since the last one is long enough that replaying it would make the next
// start slower than writing a snapshot now: a restarted member restores
// its newest snapshot, then applies every entry after it again (~35 µs
// an entry: read from raft.db, decoded, derived), while a snapshot costs
// ~3.5 µs an object. So: at least SnapshotThreshold entries, and at
// least one for every 8 objects held. Measured at 100,000 ConfigMaps, a
// follower restarted after a fill replayed 23,000-46,000 entries (0.9-1.6
// s) before it was ready; a snapshot of them takes ~0.35 s. A member
// killed instead replays, as before.
func (s *Store) snapshotBeforeClose() {
	applied := s.Revision()
	last, err := strconv.ParseUint(s.raft.Stats()["last_snapshot_index"], 10, 64)
	if err != nil || applied <= last {
		return
	}
	since, objects := applied-last, uint64(s.fsm.objectCount())
	if since < max(s.cfg.SnapshotThreshold, 1) || since < objects/8 {
		return
	}
	start := time.Now()
	if err := s.raft.Snapshot().Error(); err != nil {
		s.log.Warn("snapshot before shutdown", "err", err)
		return
	}
	s.log.Info("snapshot before shutdown: the next start replays no log", "entries", since, "objects", objects,
		"seconds", time.Since(start).Seconds())
}

// transferBeforeClose hands leadership to another voter, if there is one,
// and waits for it at most an election timeout and a half (Raft answers
// the transfer within an election timeout).
func (s *Store) transferBeforeClose() {
	cf := s.raft.GetConfiguration()
	if cf.Error() != nil {
		return
	}
	voters := 0
	for _, srv := range cf.Configuration().Servers {
		if srv.Suffrage == raft.Voter {
			voters++
		}
	}
	if voters < 2 {
		return
	}
	f := s.raft.LeadershipTransfer()
	errc := make(chan error, 1)
	go func() { errc <- f.Error() }()
	select {
	case err := <-errc:
		if err != nil {
			s.log.Warn("leadership transfer before shutdown", "err", err)
		} else {
			s.log.Info("handed leadership over before shutdown")
		}
	case <-time.After(s.cfg.ElectionTimeout * 3 / 2):
		s.log.Warn("leadership transfer before shutdown: no answer")
	}
}
