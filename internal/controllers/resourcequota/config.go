package resourcequota

import (
	"errors"
	"fmt"
	"time"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Config configures the controller. Start from DefaultConfig.
type Config struct {
	// LoopConfig: Workers is the number of quotas synced at once (kube's
	// --concurrent-resource-quota-syncs); RetryBase and RetryMax bound the
	// per-quota backoff of failed syncs.
	kit.LoopConfig
	// ResyncPeriod is how often every quota is recomputed (kube's
	// --resource-quota-sync-period).
	ResyncPeriod time.Duration
}

// DefaultConfig returns kube's defaults.
func DefaultConfig() Config {
	return Config{LoopConfig: kit.DefaultLoopConfig(5), ResyncPeriod: 5 * time.Minute}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if err := c.LoopConfig.Validate(); err != nil {
		return fmt.Errorf("resourcequota: %w", err)
	}
	if c.ResyncPeriod <= 0 {
		return errors.New("resourcequota: ResyncPeriod must be positive")
	}
	return nil
}
