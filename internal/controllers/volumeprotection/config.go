package volumeprotection

import (
	"fmt"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Config configures both controllers. Start from DefaultConfig.
type Config struct {
	// LoopConfig: Workers is the number of objects each controller
	// processes at once (kube runs 1 per controller); RetryBase and
	// RetryMax bound the per-object exponential backoff after a failure
	// (kube: 5 ms to 1000 s).
	kit.LoopConfig
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{LoopConfig: kit.DefaultLoopConfig(1)}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if err := c.LoopConfig.Validate(); err != nil {
		return fmt.Errorf("volumeprotection: %w", err)
	}
	return nil
}
