package clusterroleaggregation

import (
	"fmt"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Config configures the controller. Start from DefaultConfig.
type Config struct {
	// LoopConfig: Workers is the number of ClusterRoles synced at once
	// (kube runs 5); RetryBase and RetryMax bound the per-role backoff
	// after a failure.
	kit.LoopConfig
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{LoopConfig: kit.DefaultLoopConfig(1)}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if err := c.LoopConfig.Validate(); err != nil {
		return fmt.Errorf("clusterroleaggregation: %w", err)
	}
	return nil
}
