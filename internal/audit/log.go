package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// Log is an open audit log with its policy.
type Log struct {
	policy  *Policy
	metrics *metrics

	mu sync.Mutex // serialises writes to w: one event per line
	w  io.Writer
	c  io.Closer // nil for stdout
}

// Open loads cfg's policy and opens its log; a Config without a policy
// gives a nil Log (auditing off). reg receives the log's metrics (nil:
// none).
func Open(cfg Config, reg prometheus.Registerer) (*Log, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.Enabled() {
		return nil, nil
	}
	p, err := LoadPolicy(cfg.PolicyFile)
	if err != nil {
		return nil, err
	}
	l := &Log{policy: p, metrics: newMetrics(reg)}
	if cfg.Path == "-" {
		l.w = os.Stdout
		return l, nil
	}
	rf, err := openRotating(cfg, time.Now)
	if err != nil {
		return nil, err
	}
	l.w, l.c = rf, rf
	return l, nil
}

// Policy is the log's policy.
func (l *Log) Policy() *Policy { return l.policy }

// Write appends ev as one JSON line, with its kind and apiVersion set.
func (l *Log) Write(ev *auditv1.Event) error {
	ev.Kind, ev.APIVersion = "Event", auditv1.SchemeGroupVersion.String()
	b, err := json.Marshal(ev)
	if err != nil {
		l.metrics.failed()
		return fmt.Errorf("audit: encode event: %w", err)
	}
	b = append(b, '\n')
	l.mu.Lock()
	_, err = l.w.Write(b)
	l.mu.Unlock()
	if err != nil {
		l.metrics.failed()
		return fmt.Errorf("audit: write event: %w", err)
	}
	l.metrics.written()
	return nil
}

// Close closes the log file (stdout stays open).
func (l *Log) Close() error {
	if l == nil || l.c == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c.Close()
}
