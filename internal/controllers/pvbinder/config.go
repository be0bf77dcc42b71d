package pvbinder

import (
	"errors"
	"fmt"
	"time"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Config configures the controller. Start from DefaultConfig.
type Config struct {
	// LoopConfig: Workers sync claims and volumes concurrently (kube runs
	// one of each); RetryBase and RetryMax bound the per-object backoff
	// after a failed sync.
	kit.LoopConfig
	// Resync is how often every claim and volume is synced again, so that
	// a claim finds a volume nothing announced (kube's
	// --pvclaimbinder-sync-period, 15 s).
	Resync time.Duration
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{LoopConfig: kit.DefaultLoopConfig(1), Resync: 15 * time.Second}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if err := c.LoopConfig.Validate(); err != nil {
		return fmt.Errorf("pvbinder: %w", err)
	}
	switch {
	case c.Resync <= 0:
		return errors.New("pvbinder: Resync must be positive")
	}
	return nil
}
