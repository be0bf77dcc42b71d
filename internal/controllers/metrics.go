package controllers

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/litek8s/litek8s/internal/controllers/kit"
	"github.com/litek8s/litek8s/internal/controllers/scheduler"
)

// metrics are the controllers' collectors in the member's registry, built
// once per Manager (every term reuses them: a member that leads again
// registers nothing twice). Without a registry every field is nil and
// nothing is counted.
type metrics struct {
	// queues back every controller's work queue (workqueue_*{name}).
	queues *kit.QueueMetrics
	// scheduler is scheduler_schedule_attempts_total and its latency.
	scheduler *scheduler.Metrics
	// leading is litek8s_controller_leading.
	leading prometheus.Gauge
}

// sharedInformers is litek8s_controller_resyncs_total's controller label
// for the typed controllers' shared informers (kit.Informers), whose
// relists no single controller owns; the garbage collector's own
// informers count under gcName.
const sharedInformers = "shared-informers"

func newMetrics(reg prometheus.Registerer, stats *counters) *metrics {
	m := &metrics{queues: kit.NewQueueMetrics(reg), scheduler: scheduler.NewMetrics(reg)}
	if reg == nil {
		return m
	}
	m.leading = prometheus.NewGauge(prometheus.GaugeOpts{Name: "litek8s_controller_leading",
		Help: "1 while this member runs the controllers (it leads), 0 otherwise."})
	resyncs := func(controller string, n *atomic.Uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "litek8s_controller_resyncs_total",
			Help:        "Informer relists because an informer fell behind the change feed window or its watch failed (the goal is none).",
			ConstLabels: prometheus.Labels{"controller": controller}}, func() float64 { return float64(n.Load()) })
	}
	reg.MustRegister(m.leading, resyncs(sharedInformers, &stats.resyncs), resyncs(gcName, &stats.gcResyncs))
	return m
}

// setLeading sets litek8s_controller_leading.
func (m *metrics) setLeading(leading bool) {
	if m.leading == nil {
		return
	}
	v := 0.0
	if leading {
		v = 1
	}
	m.leading.Set(v)
}
