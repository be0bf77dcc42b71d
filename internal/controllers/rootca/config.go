package rootca

import (
	"errors"
	"time"
)

// Config configures the root CA publisher. Start from DefaultConfig.
type Config struct {
	// Workers is the number of namespaces synced at once (kube runs 1).
	Workers int
	// RetryBase and RetryMax bound the per-namespace exponential backoff
	// after a failure (kube: 5 ms to 1000 s).
	RetryBase, RetryMax time.Duration
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{Workers: 1, RetryBase: 5 * time.Millisecond, RetryMax: 30 * time.Second}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	switch {
	case c.Workers <= 0:
		return errors.New("rootca: Workers must be positive")
	case c.RetryBase <= 0 || c.RetryMax < c.RetryBase:
		return errors.New("rootca: RetryBase must be positive and RetryMax at least RetryBase")
	}
	return nil
}
