package disruption

import (
	"errors"
	"fmt"
	"time"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Config configures the controller. Start from DefaultConfig.
type Config struct {
	// LoopConfig: Workers sync budgets concurrently (kube runs 1);
	// RetryBase and RetryMax bound the per-budget backoff of failed syncs.
	kit.LoopConfig
	// DeletionTimeout is how long an evicted pod may take to be deleted
	// before it counts again (kube's DeletionTimeout, 2 minutes).
	DeletionTimeout time.Duration
	// StalePodDisruptionTimeout is how long a pod marked DisruptionTarget
	// by an eviction may stay undeleted before the mark is reset (kube's
	// stalePodDisruptionTimeout, 2 minutes).
	StalePodDisruptionTimeout time.Duration
}

// DefaultConfig returns kube's settings.
func DefaultConfig() Config {
	return Config{LoopConfig: kit.DefaultLoopConfig(1), DeletionTimeout: 2 * time.Minute, StalePodDisruptionTimeout: 2 * time.Minute}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if err := c.LoopConfig.Validate(); err != nil {
		return fmt.Errorf("disruption: %w", err)
	}
	switch {
	case c.DeletionTimeout <= 0 || c.StalePodDisruptionTimeout <= 0:
		return errors.New("disruption: DeletionTimeout and StalePodDisruptionTimeout must be positive")
	}
	return nil
}
