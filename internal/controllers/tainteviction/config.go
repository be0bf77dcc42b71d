package tainteviction

import (
	"fmt"
	"time"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Config configures the controller. Start from DefaultConfig.
type Config struct {
	// LoopConfig: Workers sync pods concurrently; RetryBase and RetryMax
	// bound the per-pod backoff of failed syncs.
	kit.LoopConfig
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{LoopConfig: kit.LoopConfig{Workers: 2, RetryBase: 20 * time.Millisecond, RetryMax: 10 * time.Second}}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if err := c.LoopConfig.Validate(); err != nil {
		return fmt.Errorf("tainteviction: %w", err)
	}
	return nil
}
