package raftstore

import (
	"strings"
	"sync"
	"unicode"

	gometrics "github.com/armon/go-metrics"
	gmprom "github.com/armon/go-metrics/prometheus"
	wal "github.com/hashicorp/raft-wal"
	walmetrics "github.com/hashicorp/raft-wal/metrics"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// hashicorp/raft and raft-wal emit their own metrics (raft.commitTime,
// raft.fsm.apply, raft.wal.log_appends, ...) through go-metrics' global
// (hashicorp/go-metrics/compat, which without build tags forwards to
// armon/go-metrics). raftMetrics points that global, once per process, at
// an armon/go-metrics Prometheus sink kept in a private registry, and gives
// each member's registry a collector that re-exports the sink's series as
// raft_*:
//
//   - names in snake_case (raft_commit_time, not raft_commitTime), label
//     names too, and counters with the _total suffix, so that `promtool
//     check metrics` finds nothing to complain about;
//   - go-metrics timers are summaries in milliseconds (quantiles over the
//     last 10 s, NaN when nothing was measured then); other samples
//     (raft_fsm_apply_batch_num, ...) are summaries of plain numbers;
//   - series never expire (a counter that rarely moves, such as
//     raft_state_leader_total, must not vanish between increments);
//   - raft.boltdb.*, which raft-boltdb emits only while raftlog copies an
//     earlier version's raft.db, is left out (its series would stay).
//
// The global is process-wide: in a process that runs several members (the
// tests), every member's registry exposes the same raft_* series, the sum
// of all of them. In production one process is one member. The store's own
// litek8s_raft_* series are per member.

var raftSink struct {
	once sync.Once
	reg  *prometheus.Registry // holds the sink
	err  error
}

// raftMetrics installs the go-metrics sink (once per process) and returns
// a new collector of its series for one member's registry.
func raftMetrics() (prometheus.Collector, error) {
	raftSink.once.Do(func() {
		reg := prometheus.NewRegistry()
		sink, err := gmprom.NewPrometheusSinkFrom(gmprom.PrometheusOpts{Registerer: reg,
			Name: "litek8s_raft_gometrics_sink", Expiration: 0})
		if err != nil {
			raftSink.err = err
			return
		}
		conf := gometrics.DefaultConfig("") // no service prefix: raft's names start with raft.
		conf.EnableHostname, conf.EnableHostnameLabel, conf.EnableServiceLabel = false, false, false
		conf.EnableRuntimeMetrics = false // no goroutine; the Go collector covers the runtime
		// raft-boltdb runs only to copy an earlier version's raft.db.
		conf.BlockedPrefixes = []string{"raft.boltdb"}
		if _, err := gometrics.NewGlobal(conf, sink); err != nil {
			raftSink.err = err
			return
		}
		raftSink.reg = reg
	})
	if raftSink.err != nil {
		return nil, raftSink.err
	}
	return raftBridge{raftSink.reg}, nil
}

// walMetrics passes raft-wal's counters and gauges (raft.wal.<name>) to
// go-metrics' global at each call: raft-wal's own GoMetricsCollector keeps
// the global it was made with, and the store opens its log before
// raftMetrics installs the sink (in a process's first store, which in
// production is its only one, no raft_wal_* series appeared). keys holds
// the go-metrics key of each metric raft-wal defines, so that an append
// (three counters) allocates none.
type walMetrics struct{ keys map[string][]string }

func newWALMetrics() walMetrics {
	m := walMetrics{keys: map[string][]string{}}
	for _, ds := range [][]walmetrics.Descriptor{wal.MetricDefinitions.Counters, wal.MetricDefinitions.Gauges} {
		for _, d := range ds {
			m.keys[d.Name] = []string{"raft", "wal", d.Name}
		}
	}
	return m
}

func (m walMetrics) key(name string) []string {
	if k, ok := m.keys[name]; ok {
		return k
	}
	return []string{"raft", "wal", name}
}

func (m walMetrics) IncrementCounter(name string, delta uint64) {
	gometrics.IncrCounter(m.key(name), float32(delta))
}

func (m walMetrics) SetGauge(name string, val uint64) {
	gometrics.SetGauge(m.key(name), float32(val))
}

// raftBridge re-exports the sink's series with Prometheus-style names. It
// is an unchecked collector (it describes nothing): the series appear as
// Raft emits them.
type raftBridge struct{ src prometheus.Gatherer }

func (raftBridge) Describe(chan<- *prometheus.Desc) {}

func (b raftBridge) Collect(ch chan<- prometheus.Metric) {
	mfs, err := b.src.Gather()
	if err != nil {
		return // the sink's own registry never fails; nothing to report
	}
	for _, mf := range mfs {
		name := promName(mf.GetName())
		if mf.GetType() == dto.MetricType_COUNTER && !strings.HasSuffix(name, "_total") {
			name += "_total"
		}
		help := "hashicorp/raft go-metrics " + mf.GetName() + " (timers in milliseconds)"
		for _, m := range mf.GetMetric() {
			labels := make(prometheus.Labels, len(m.GetLabel()))
			for _, lp := range m.GetLabel() {
				labels[promName(lp.GetName())] = lp.GetValue()
			}
			desc := prometheus.NewDesc(name, help, nil, labels)
			var (
				metric prometheus.Metric
				err    error
			)
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				metric, err = prometheus.NewConstMetric(desc, prometheus.CounterValue, m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				metric, err = prometheus.NewConstMetric(desc, prometheus.GaugeValue, m.GetGauge().GetValue())
			case dto.MetricType_SUMMARY:
				s := m.GetSummary()
				q := make(map[float64]float64, len(s.GetQuantile()))
				for _, qv := range s.GetQuantile() {
					q[qv.GetQuantile()] = qv.GetValue()
				}
				metric, err = prometheus.NewConstSummary(desc, s.GetSampleCount(), s.GetSampleSum(), q)
			default:
				continue
			}
			if err == nil {
				ch <- metric
			}
		}
	}
}

// promName turns a go-metrics name (raft_commitTime, raft_net_getRPCType)
// into snake_case (raft_commit_time, raft_net_get_rpc_type) made only of
// [a-z0-9_].
func promName(s string) string {
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				b.WriteByte('_')
			}
		}
		switch r = unicode.ToLower(r); {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
