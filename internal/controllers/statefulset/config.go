package statefulset

import (
	"fmt"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Config configures the controller. Start from DefaultConfig.
type Config struct {
	// LoopConfig: Workers is the number of StatefulSets synced at once
	// (kube's --concurrent-statefulset-syncs); RetryBase and RetryMax bound
	// the per-StatefulSet backoff of failed syncs.
	kit.LoopConfig
}

// DefaultConfig returns kube's defaults.
func DefaultConfig() Config {
	return Config{LoopConfig: kit.DefaultLoopConfig(5)}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if err := c.LoopConfig.Validate(); err != nil {
		return fmt.Errorf("statefulset: %w", err)
	}
	return nil
}
