package resourcequota

import (
	"errors"
	"time"
)

// Config configures the controller. Start from DefaultConfig.
type Config struct {
	// Workers is the number of quotas synced at once (kube's
	// --concurrent-resource-quota-syncs).
	Workers int
	// ResyncPeriod is how often every quota is recomputed (kube's
	// --resource-quota-sync-period).
	ResyncPeriod time.Duration
	// RetryBaseDelay and RetryMaxDelay bound the per-quota backoff of
	// failed syncs.
	RetryBaseDelay, RetryMaxDelay time.Duration
}

// DefaultConfig returns kube's defaults.
func DefaultConfig() Config {
	return Config{Workers: 5, ResyncPeriod: 5 * time.Minute, RetryBaseDelay: 5 * time.Millisecond, RetryMaxDelay: 30 * time.Second}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if c.Workers <= 0 || c.ResyncPeriod <= 0 || c.RetryBaseDelay <= 0 || c.RetryMaxDelay < c.RetryBaseDelay {
		return errors.New("resourcequota: Workers and ResyncPeriod must be positive, retry delays positive and ordered")
	}
	return nil
}
