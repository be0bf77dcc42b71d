package member

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// newRegistry is the member's own Prometheus registry (never the global
// one: members in one process must not collide), with the Go runtime and
// process collectors. The store, the API and the controllers register
// their collectors in it.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// metricsHandler serves the registry in the Prometheus text (or
// OpenMetrics) format.
func metricsHandler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg, EnableOpenMetrics: true})
}

// startMetrics starts the metrics-only listener when MetricsAddr is set:
// plain HTTP, GET /metrics of the member's registry and nothing else, for
// scrapers without credentials. Close stops it and waits for it.
func (m *Member) startMetrics() error {
	if m.cfg.MetricsAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", m.cfg.MetricsAddr)
	if err != nil {
		return fmt.Errorf("member: metrics listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metricsHandler(m.metrics))
	m.metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(m.log.Handler(), slog.LevelDebug)}
	m.metricsLn = ln
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		if err := m.metricsSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.log.Error("metrics listener stopped", "err", err)
		}
	}()
	return nil
}

// MetricsAddr returns the address of the metrics-only listener, empty when
// it is off.
func (m *Member) MetricsAddr() string {
	if m.metricsLn == nil {
		return ""
	}
	return m.metricsLn.Addr().String()
}
