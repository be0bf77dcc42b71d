package raftstore

import (
	"errors"

	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/litek8s/litek8s/internal/kv"
)

// Metrics. Events (a proposal committed, a batch applied, a snapshot, a
// watcher ended, a resync) are counted where they happen, with counters
// and histograms whose updates are atomic adds and never allocate. State
// (Raft's indexes and role, readiness, objects, watchers, the feed window,
// raft.db, the leader's view of every member's lag) is read at scrape time
// by stateCollector, so the hot paths pay nothing for it. hashicorp/raft's
// own go-metrics are bridged in by raftMetrics (gometrics.go). The series
// and their meaning are the contract in docs/metrics.md.

// Histogram buckets (docs/metrics.md). latencyBuckets: a proposal commits,
// a batch applies and a consistent read waits in well under a millisecond
// to tens of milliseconds; anything past a second is an incident.
// durationBuckets: a snapshot of the whole store or its restore takes tens
// of milliseconds to minutes. batchBuckets: Raft hands the FSM 1 to
// MaxAppendEntries (256) entries at once.
var (
	latencyBuckets  = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	durationBuckets = []float64{.01, .05, .1, .5, 1, 5, 10, 30, 60, 300}
	batchBuckets    = prometheus.ExponentialBuckets(1, 2, 10) // 1, 2, 4, ..., 512
)

// metrics are the store's event collectors. A metrics built with a nil
// registerer works the same and is exported nowhere.
type metrics struct {
	propose, apply, applyBatch  prometheus.Histogram
	snapshot, restore           prometheus.Histogram
	snapshotFailures            prometheus.Counter
	leaderChanges, resyncs      prometheus.Counter
	resyncSignals               *prometheus.CounterVec // by member; collected by stateCollector
	expiredSlow, expiredRestore prometheus.Counter
	expiredResync               prometheus.Counter
	readIndexLeader             prometheus.Observer
	readIndexFollower           prometheus.Observer

	reg prometheus.Registerer // nil: none
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	hist := func(name, help string, buckets []float64) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
	}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	expired := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "litek8s_store_watchers_expired_total",
		Help: "Watches of the change feed ended with 410 Expired, by reason (slow: its buffer filled; restore: a snapshot was installed; resync: the member was told to resync)."},
		[]string{"reason"})
	readIndex := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "litek8s_store_read_index_duration_seconds",
		Help:    "Consistent-read wait: read index (leader: leadership check; follower: a call to the leader) plus waiting for it to be applied, by this member's role.",
		Buckets: latencyBuckets}, []string{"role"})
	m := &metrics{
		propose: hist("litek8s_raft_propose_duration_seconds",
			"Commit latency on the leader: a write proposed until this member applied it.", latencyBuckets),
		apply: hist("litek8s_raft_apply_duration_seconds",
			"FSM apply time of one batch of committed entries.", latencyBuckets),
		applyBatch: hist("litek8s_raft_apply_batch_entries",
			"Entries per batch applied by the FSM.", batchBuckets),
		snapshot: hist("litek8s_raft_snapshot_duration_seconds",
			"Time to persist an FSM snapshot (successful ones).", durationBuckets),
		restore: hist("litek8s_raft_restore_duration_seconds",
			"Time to restore the store from a snapshot (installed by the leader, or at restart).", durationBuckets),
		snapshotFailures: counter("litek8s_raft_snapshot_failures_total", "FSM snapshots that failed to persist."),
		leaderChanges: counter("litek8s_raft_leader_changes_total",
			"Leaders this member learned of: its own elections and other members'."),
		resyncs: counter("litek8s_raft_resyncs_total", "Times the leader told this member to resync."),
		resyncSignals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "litek8s_raft_resync_signals_sent_total",
			Help: "As leader: resync signals sent to each member."}, []string{"member"}),
		expiredSlow:       expired.WithLabelValues("slow"),
		expiredRestore:    expired.WithLabelValues("restore"),
		expiredResync:     expired.WithLabelValues("resync"),
		readIndexLeader:   readIndex.WithLabelValues("leader"),
		readIndexFollower: readIndex.WithLabelValues("follower"),
		reg:               reg,
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.propose, m.apply, m.applyBatch, m.snapshot, m.restore,
		m.snapshotFailures, m.leaderChanges, m.resyncs, expired, readIndex} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// noMetrics is the metrics of an FSM that is not part of an open Store
// (tests, benchmarks); Open replaces it.
func noMetrics() *metrics {
	m, _ := newMetrics(nil)
	return m
}

// registerState registers, once Raft runs, the collectors that read s at
// scrape time (and hashicorp/raft's bridged metrics), and counts leader
// changes from Raft's observations.
func (m *metrics) registerState(s *Store) error {
	// The filter runs on Raft's goroutine for every observation and keeps
	// none: counting there needs no channel and no goroutine.
	s.raft.RegisterObserver(raft.NewObserver(nil, false, func(o *raft.Observation) bool {
		if lo, ok := o.Data.(raft.LeaderObservation); ok && lo.LeaderID != "" {
			m.leaderChanges.Inc()
		}
		return false
	}))
	if m.reg == nil {
		return nil
	}
	if err := m.reg.Register(newStateCollector(s, m)); err != nil {
		return err
	}
	bridge, err := raftMetrics()
	if err != nil {
		return err
	}
	return m.reg.Register(bridge)
}

// stateCollector reads the store's state at scrape time.
type stateCollector struct {
	s *Store
	m *metrics

	state, term, commit, applied, lastLog, snapIndex   *prometheus.Desc
	hasLeader, ready, logBytes                         *prometheus.Desc
	objects, watchers, feedWindow, lagEntries, lagSecs *prometheus.Desc
}

func newStateCollector(s *Store, m *metrics) *stateCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &stateCollector{s: s, m: m,
		state:      d("litek8s_raft_state", "1 for this member's Raft state, 0 for the others.", "state"),
		term:       d("litek8s_raft_term", "Current Raft term."),
		commit:     d("litek8s_raft_commit_index", "Raft's commit index."),
		applied:    d("litek8s_raft_applied_index", "Index of the last entry the store applied (its revision)."),
		lastLog:    d("litek8s_raft_last_log_index", "Index of the last entry in this member's Raft log."),
		snapIndex:  d("litek8s_raft_snapshot_index", "Index of this member's latest Raft snapshot."),
		hasLeader:  d("litek8s_raft_has_leader", "1 when this member knows a leader."),
		ready:      d("litek8s_raft_ready", "1 when this member is ready (/readyz): it knows a leader and is caught up."),
		logBytes:   d("litek8s_raft_log_bytes", "Size of this member's Raft log on disk (its segment files, preallocated)."),
		objects:    d("litek8s_store_objects", "Objects in the store, every resource."),
		watchers:   d("litek8s_store_watchers", "Open watchers of the change feed."),
		feedWindow: d("litek8s_store_feed_window_revisions", "Revisions a watch can resume from: applied index minus the oldest available."),
		lagEntries: d("litek8s_raft_member_lag_entries", "As leader: entries each member is behind (0 for itself).", "member"),
		lagSecs:    d("litek8s_raft_member_lag_seconds", "As leader: how long ago the leader applied the oldest entry each member misses.", "member"),
	}
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.state, c.term, c.commit, c.applied, c.lastLog, c.snapIndex,
		c.hasLeader, c.ready, c.logBytes, c.objects, c.watchers, c.feedWindow, c.lagEntries, c.lagSecs} {
		ch <- d
	}
	c.m.resyncSignals.Describe(ch)
}

// raftStates are the values of litek8s_raft_state's label.
var raftStates = []raft.RaftState{raft.Leader, raft.Follower, raft.Candidate, raft.Shutdown}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	st := s.Status()
	for _, rs := range raftStates {
		gauge(c.state, boolValue(rs.String() == st.Role), rs.String())
	}
	gauge(c.term, float64(st.Term))
	gauge(c.commit, float64(st.CommitIndex))
	gauge(c.applied, float64(st.AppliedIndex))
	gauge(c.lastLog, float64(st.LastLogIndex))
	gauge(c.snapIndex, float64(st.SnapshotIndex))
	gauge(c.hasLeader, boolValue(st.LeaderID != ""))
	gauge(c.ready, boolValue(s.Ready()))
	if n, err := s.logs.Bytes(); err == nil {
		gauge(c.logBytes, float64(n))
	}
	objs, watchers, window := s.fsm.counts()
	gauge(c.objects, float64(objs))
	gauge(c.watchers, float64(watchers))
	gauge(c.feedWindow, float64(window))
	if lag, err := s.Lag(); err == nil {
		for _, l := range lag {
			gauge(c.lagEntries, float64(l.Entries), l.ID)
			gauge(c.lagSecs, l.Seconds, l.ID)
			c.m.resyncSignals.WithLabelValues(l.ID) // every member's series, from 0
		}
	} else if !errors.Is(err, kv.ErrNotLeader) {
		s.log.Debug("metrics: lag", "err", err)
	}
	c.m.resyncSignals.Collect(ch)
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// counts returns the number of objects, of open watchers and of revisions
// in the feed's window.
func (f *fsm) counts() (objects, watchers int, window uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range f.objs.tables {
		objects += t.tree.Len()
	}
	for _, ws := range f.feed.watchers {
		watchers += len(ws)
	}
	return objects, watchers, f.applied - min(f.feed.oldestAvailable(), f.applied)
}
