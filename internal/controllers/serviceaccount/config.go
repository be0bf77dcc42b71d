package serviceaccount

import (
	"fmt"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Config configures the service account controller. Start from
// DefaultConfig.
type Config struct {
	// LoopConfig: Workers is the number of namespaces synced at once
	// (kube runs 1); RetryBase and RetryMax bound the per-namespace
	// exponential backoff after a failure (kube: 5 ms to 1000 s).
	kit.LoopConfig
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{LoopConfig: kit.DefaultLoopConfig(1)}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if err := c.LoopConfig.Validate(); err != nil {
		return fmt.Errorf("serviceaccount: %w", err)
	}
	return nil
}
