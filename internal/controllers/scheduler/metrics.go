package scheduler

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are kube-scheduler's attempt series, per member: built once (New
// registers them) and handed to every term's Scheduler. A nil *Metrics
// counts nothing.
type Metrics struct {
	attempts *prometheus.CounterVec   // result, profile
	duration *prometheus.HistogramVec // result, profile
}

// Attempt results, kube-scheduler's values.
const (
	resultScheduled     = "scheduled"
	resultUnschedulable = "unschedulable"
	resultError         = "error"
)

// NewMetrics registers the scheduler's series in reg (nil: none, a nil
// *Metrics).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	if reg == nil {
		return nil
	}
	labels := []string{"result", "profile"}
	m := &Metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "scheduler_schedule_attempts_total",
			Help: "Number of attempts to schedule pods, by the result (scheduled, unschedulable, error) and the profile (schedulerName)."},
			labels),
		// kube-scheduler's buckets: 1 ms to about 16 s by doublings.
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "scheduler_scheduling_attempt_duration_seconds",
			Help:    "Scheduling attempt latency in seconds (deciding and binding), by result and profile.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15)}, labels),
	}
	reg.MustRegister(m.attempts, m.duration)
	return m
}

// observe counts one attempt of profile that began at start.
func (m *Metrics) observe(profile, result string, start time.Time) {
	if m == nil {
		return
	}
	m.attempts.WithLabelValues(result, profile).Inc()
	m.duration.WithLabelValues(result, profile).Observe(time.Since(start).Seconds())
}
