package statefulset

import (
	"errors"
	"time"
)

// Config configures the controller. Start from DefaultConfig.
type Config struct {
	// Workers is the number of StatefulSets synced at once (kube's
	// --concurrent-statefulset-syncs).
	Workers int
	// RetryBaseDelay and RetryMaxDelay bound the per-StatefulSet backoff
	// of failed syncs.
	RetryBaseDelay, RetryMaxDelay time.Duration
}

// DefaultConfig returns kube's defaults.
func DefaultConfig() Config {
	return Config{Workers: 5, RetryBaseDelay: 5 * time.Millisecond, RetryMaxDelay: 30 * time.Second}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if c.Workers <= 0 || c.RetryBaseDelay <= 0 || c.RetryMaxDelay < c.RetryBaseDelay {
		return errors.New("statefulset: Workers must be positive, retry delays positive and ordered")
	}
	return nil
}
