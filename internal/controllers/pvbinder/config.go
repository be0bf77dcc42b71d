package pvbinder

import (
	"errors"
	"time"
)

// Config configures the controller. Start from DefaultConfig.
type Config struct {
	// Workers sync claims and volumes concurrently (kube runs one of
	// each).
	Workers int
	// Resync is how often every claim and volume is synced again, so that
	// a claim finds a volume nothing announced (kube's
	// --pvclaimbinder-sync-period, 15 s).
	Resync time.Duration
	// RetryBase and RetryMax bound the per-object backoff after a failed
	// sync.
	RetryBase, RetryMax time.Duration
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{Workers: 1, Resync: 15 * time.Second, RetryBase: 5 * time.Millisecond, RetryMax: 30 * time.Second}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	switch {
	case c.Workers <= 0:
		return errors.New("pvbinder: Workers must be positive")
	case c.Resync <= 0:
		return errors.New("pvbinder: Resync must be positive")
	case c.RetryBase <= 0 || c.RetryMax < c.RetryBase:
		return errors.New("pvbinder: RetryBase must be positive and RetryMax at least RetryBase")
	}
	return nil
}
