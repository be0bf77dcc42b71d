package scheduler

import (
	"errors"
	"time"
)

// Config configures the scheduler. Start from DefaultConfig.
type Config struct {
	// Name is the schedulerName served and the controller's client name.
	Name string
	// Binders is how many binds (and unschedulable status writes) may be
	// in flight at once.
	Binders int
	// BackoffBase and BackoffMax bound a pod's retry backoff (kube: 1 s,
	// 10 s).
	BackoffBase, BackoffMax time.Duration
	// FlushInterval is how long an unschedulable pod waits at most before
	// it is tried again without any cluster change (kube: 5 min).
	FlushInterval time.Duration
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{Name: "default-scheduler", Binders: 16, BackoffBase: time.Second, BackoffMax: 10 * time.Second,
		FlushInterval: time.Minute}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	switch {
	case c.Name == "":
		return errors.New("scheduler: Name is required")
	case c.Binders <= 0:
		return errors.New("scheduler: Binders must be positive")
	case c.BackoffBase <= 0 || c.BackoffMax < c.BackoffBase:
		return errors.New("scheduler: backoff must be positive, the maximum at least the base")
	case c.FlushInterval <= 0:
		return errors.New("scheduler: FlushInterval must be positive")
	}
	return nil
}
