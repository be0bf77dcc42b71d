package audit

import "github.com/prometheus/client_golang/prometheus"

// metrics are kube-apiserver's audit counters (its names, so that its
// dashboards and alerts apply). A nil *metrics counts nothing.
type metrics struct {
	events prometheus.Counter // apiserver_audit_event_total
	errors prometheus.Counter // apiserver_audit_error_total{plugin="log"}
}

func newMetrics(reg prometheus.Registerer) *metrics {
	if reg == nil {
		return nil
	}
	m := &metrics{
		events: prometheus.NewCounter(prometheus.CounterOpts{Name: "apiserver_audit_event_total",
			Help: "Counter of audit events generated and sent to the audit backend."}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{Name: "apiserver_audit_error_total",
			Help:        "Counter of audit events that failed to be audited properly.",
			ConstLabels: prometheus.Labels{"plugin": "log"}}),
	}
	reg.MustRegister(m.events, m.errors)
	return m
}

func (m *metrics) written() {
	if m != nil {
		m.events.Inc()
	}
}

func (m *metrics) failed() {
	if m != nil {
		m.errors.Inc()
	}
}
