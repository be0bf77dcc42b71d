package raftstore

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"

	"github.com/litek8s/litek8s/internal/kv"
)

// value returns the value of series name{labelPairs...} in reg (a
// histogram's sample count), or -1 when there is no such series.
func value(t testing.TB, reg prometheus.Gatherer, name string, labelPairs ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labelPairs); i += 2 {
				if !hasLabel(m, labelPairs[i], labelPairs[i+1]) {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return -1
}

// lint checks reg's series with promtool's linter (promlint).
func lint(t testing.TB, what string, reg prometheus.Gatherer) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	problems, err := promlint.NewWithMetricFamilies(mfs).Lint()
	if err != nil || len(problems) > 0 {
		t.Errorf("%s: promlint: %v %v", what, err, problems)
	}
}

func hasLabel(m *dto.Metric, name, val string) bool {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue() == val
		}
	}
	return false
}

// The FSM counts applied batches, watchers it ended, snapshots and
// restores.
func TestMetricsFSM(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := newMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, 100, 1)
	h.f.useMetrics(m)
	slow, err := h.f.watch("configmaps", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Stop()
	h.f.ApplyBatch([]*raft.Log{h.log(cmWrite(kv.OpCreate, "ns", "a", 0)), h.log(cmWrite(kv.OpCreate, "ns", "b", 0))})
	h.create("ns", "c")
	for name, want := range map[string]float64{
		"litek8s_raft_apply_duration_seconds": 2, "litek8s_raft_apply_batch_entries": 2,
	} {
		if got := value(t, reg, name); got != want {
			t.Errorf("%s: %v samples, want %v", name, got, want)
		}
	}
	if got := value(t, reg, "litek8s_store_watchers_expired_total", "reason", "slow"); got != 1 {
		t.Errorf("watchers expired (slow): %v, want 1", got)
	}

	snap := persist(t, h.f)
	if got := value(t, reg, "litek8s_raft_snapshot_duration_seconds"); got != 1 {
		t.Errorf("snapshots: %v, want 1", got)
	}
	s, _ := h.f.Snapshot()
	if err := s.Persist(&memSink{failAt: 1}); err == nil {
		t.Fatal("persist to a failing sink succeeded")
	}
	if got := value(t, reg, "litek8s_raft_snapshot_failures_total"); got != 1 {
		t.Errorf("snapshot failures: %v, want 1", got)
	}

	var watchers []*Watcher
	for range 2 {
		w, err := h.f.watch("configmaps", "", h.f.appliedIndex())
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		watchers = append(watchers, w)
	}
	if err := h.f.Restore(nopCloser{bytes.NewReader(snap)}); err != nil {
		t.Fatal(err)
	}
	if got := value(t, reg, "litek8s_raft_restore_duration_seconds"); got != 1 {
		t.Errorf("restores: %v, want 1", got)
	}
	if got := value(t, reg, "litek8s_store_watchers_expired_total", "reason", "restore"); got != 2 {
		t.Errorf("watchers expired (restore): %v, want 2", got)
	}
	lint(t, "fsm", reg)
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// Every member of a cluster exports the state series; the leader the lag
// of every member and the resync signals it sent; a member told to resync
// counts it and the watches it ended.
func TestMetricsCluster(t *testing.T) {
	regs := map[string]*prometheus.Registry{}
	for i := range 3 {
		regs[fmt.Sprintf("m%d", i)] = prometheus.NewRegistry()
	}
	c := newTestCluster(t, 3, func(cfg *Config) {
		cfg.Metrics = regs[cfg.ID]
		cfg.LagReportInterval = 50 * time.Millisecond
		cfg.ResyncLagEntries = 0 // only when asked
		// Every check below assumes one leader throughout: timings that
		// a loaded machine does not turn into an election.
		cfg.HeartbeatTimeout, cfg.ElectionTimeout, cfg.LeaderLeaseTimeout = time.Second, time.Second, 500*time.Millisecond
	})
	l := c.WaitLeader()
	f := (l + 1) % 3
	for i := range 5 {
		c.propose(cmWrite(kv.OpCreate, "ns", fmt.Sprintf("a%d", i), 0))
	}
	if err := c.store(f).Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	w, err := c.store(f).Watch("configmaps", "", c.store(f).Revision())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := c.store(l).RequestResync(c.members[f].id); err != nil {
		t.Fatal(err)
	}
	lreg, freg := regs[c.members[l].id], regs[c.members[f].id]
	eventually(t, 10*time.Second, func() error {
		for _, want := range []struct {
			reg        prometheus.Gatherer
			name       string
			labelPairs []string
			want       float64
		}{
			{lreg, "litek8s_raft_state", []string{"state", "Leader"}, 1},
			{freg, "litek8s_raft_state", []string{"state", "Follower"}, 1},
			{freg, "litek8s_raft_has_leader", nil, 1},
			{freg, "litek8s_raft_resyncs_total", nil, 1},
			{freg, "litek8s_store_watchers_expired_total", []string{"reason", "resync"}, 1},
			{freg, "litek8s_store_read_index_duration_seconds", []string{"role", "follower"}, 1},
			{lreg, "litek8s_raft_resync_signals_sent_total", []string{"member", c.members[f].id}, 1},
			{lreg, "litek8s_raft_resync_signals_sent_total", []string{"member", c.members[l].id}, 0},
			{lreg, "litek8s_raft_member_lag_entries", []string{"member", c.members[l].id}, 0},
			{freg, "litek8s_raft_member_lag_entries", nil, -1}, // a follower has none
		} {
			if got := value(t, want.reg, want.name, want.labelPairs...); got != want.want {
				return fmt.Errorf("%s%v = %v, want %v", want.name, want.labelPairs, got, want.want)
			}
		}
		return nil
	})
	if got := value(t, lreg, "litek8s_raft_propose_duration_seconds"); got < 5 {
		t.Errorf("leader: %v proposals timed, want at least 5", got)
	}
	for id, reg := range regs {
		for _, name := range []string{"litek8s_raft_applied_index", "litek8s_raft_commit_index", "litek8s_store_objects"} {
			if got := value(t, reg, name); got < 5 {
				t.Errorf("%s: %s = %v, want at least 5", id, name, got)
			}
		}
		if got := value(t, reg, "litek8s_raft_leader_changes_total"); got < 1 {
			t.Errorf("%s: leader changes %v, want at least 1", id, got)
		}
		if got := value(t, reg, "raft_apply_total"); got < 5 {
			t.Errorf("%s: raft_apply_total = %v: hashicorp/raft's metrics not bridged", id, got)
		}
		if got := value(t, reg, "raft_wal_log_appends_total"); got < 5 {
			t.Errorf("%s: raft_wal_log_appends_total = %v: raft-wal's metrics not bridged", id, got)
		}
		if got := value(t, reg, "litek8s_raft_log_bytes"); got < 1<<20 {
			t.Errorf("%s: litek8s_raft_log_bytes = %v, want at least a preallocated segment", id, got)
		}
		lint(t, id, reg)
	}
}

func TestPromName(t *testing.T) {
	for in, want := range map[string]string{
		"raft_commitTime":                    "raft_commit_time",
		"raft_net_getRPCType":                "raft_net_get_rpc_type",
		"raft_fsm_applyBatchNum":             "raft_fsm_apply_batch_num",
		"raft_replication_appendEntries_rpc": "raft_replication_append_entries_rpc",
		"rpcType":                            "rpc_type",
		"peer_id":                            "peer_id",
		"raft_boltdb_txstats_pageCount":      "raft_boltdb_txstats_page_count",
		"raft.x-y z":                         "raft_x_y_z",
	} {
		if got := promName(in); got != want {
			t.Errorf("promName(%q) = %q, want %q", in, got, want)
		}
	}
}
