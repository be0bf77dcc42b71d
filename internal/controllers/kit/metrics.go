package kit

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

// QueueMetrics is a workqueue.MetricsProvider backed by one member's
// registry: client-go's workqueue_* series (kube-controller-manager's
// names) with a name label, one child per queue name. It is built once per
// member (New registers the vectors) and handed to every queue of every
// term: a queue built again in a later term gets the same children, so a
// term that starts over never registers anything twice. Never the global
// workqueue.SetProvider: members in one process must not collide.
//
// A nil *QueueMetrics provides no metrics (queues built with NewQueue
// then have none).
type QueueMetrics struct {
	depth, unfinished, longest *prometheus.GaugeVec
	adds, retries              *prometheus.CounterVec
	latency, work              *prometheus.HistogramVec

	mu    sync.Mutex      // guards names
	names map[string]bool // the queue names handed out (Reset)
}

// queueBuckets are client-go's (component-base's) workqueue buckets, 10 ns
// to 10 s by decades, so that kube-controller-manager's dashboards read
// them the same way.
var queueBuckets = prometheus.ExponentialBuckets(10e-9, 10, 10)

// NewQueueMetrics registers the workqueue vectors in reg (nil: no
// metrics, a nil *QueueMetrics).
func NewQueueMetrics(reg prometheus.Registerer) *QueueMetrics {
	if reg == nil {
		return nil
	}
	name := []string{"name"}
	m := &QueueMetrics{
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_depth",
			Help: "Current depth of workqueue"}, name),
		adds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "workqueue_adds_total",
			Help: "Total number of adds handled by workqueue"}, name),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "workqueue_queue_duration_seconds",
			Help: "How long in seconds an item stays in workqueue before being requested.", Buckets: queueBuckets}, name),
		work: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "workqueue_work_duration_seconds",
			Help: "How long in seconds processing an item from workqueue takes.", Buckets: queueBuckets}, name),
		unfinished: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_unfinished_work_seconds",
			Help: "How many seconds of work has done that is in progress and hasn't been observed by work_duration."}, name),
		longest: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_longest_running_processor_seconds",
			Help: "How many seconds has the longest running processor for workqueue been running."}, name),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "workqueue_retries_total",
			Help: "Total number of retries handled by workqueue"}, name),
		names: make(map[string]bool),
	}
	reg.MustRegister(m.depth, m.adds, m.latency, m.work, m.unfinished, m.longest, m.retries)
	return m
}

// NewQueue returns a rate-limited queue named name whose metrics go to
// kc's QueueMetrics (none when it has none).
func NewQueue[T comparable](kc *Context, name string, limiter workqueue.TypedRateLimiter[T]) workqueue.TypedRateLimitingInterface[T] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(limiter, QueueConfig[T](kc.Queues, name))
}

// QueueConfig is the configuration of a queue named name reporting to m.
func QueueConfig[T comparable](m *QueueMetrics, name string) workqueue.TypedRateLimitingQueueConfig[T] {
	cfg := workqueue.TypedRateLimitingQueueConfig[T]{Name: name}
	if m != nil {
		cfg.MetricsProvider = m
	}
	return cfg
}

// Reset zeroes the gauges of every queue handed out: a term's queues are
// shut down (their depth and work in progress no longer mean anything)
// and the next term's start from empty. Call it once the term's
// controllers have returned.
func (m *QueueMetrics) Reset() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for n := range m.names {
		m.depth.WithLabelValues(n).Set(0)
		m.unfinished.WithLabelValues(n).Set(0)
		m.longest.WithLabelValues(n).Set(0)
	}
}

func (m *QueueMetrics) handOut(name string) {
	m.mu.Lock()
	m.names[name] = true
	m.mu.Unlock()
}

// NewDepthMetric implements workqueue.MetricsProvider. A queue starts
// empty: its depth is zeroed.
func (m *QueueMetrics) NewDepthMetric(name string) workqueue.GaugeMetric {
	m.handOut(name)
	g := m.depth.WithLabelValues(name)
	g.Set(0)
	return g
}

// NewAddsMetric implements workqueue.MetricsProvider.
func (m *QueueMetrics) NewAddsMetric(name string) workqueue.CounterMetric {
	return m.adds.WithLabelValues(name)
}

// NewLatencyMetric implements workqueue.MetricsProvider.
func (m *QueueMetrics) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return m.latency.WithLabelValues(name)
}

// NewWorkDurationMetric implements workqueue.MetricsProvider.
func (m *QueueMetrics) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return m.work.WithLabelValues(name)
}

// NewUnfinishedWorkSecondsMetric implements workqueue.MetricsProvider.
func (m *QueueMetrics) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return m.unfinished.WithLabelValues(name)
}

// NewLongestRunningProcessorSecondsMetric implements workqueue.MetricsProvider.
func (m *QueueMetrics) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return m.longest.WithLabelValues(name)
}

// NewRetriesMetric implements workqueue.MetricsProvider.
func (m *QueueMetrics) NewRetriesMetric(name string) workqueue.CounterMetric {
	return m.retries.WithLabelValues(name)
}
