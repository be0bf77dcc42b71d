package disruption

import (
	"errors"
	"time"
)

// Config configures the controller. Start from DefaultConfig.
type Config struct {
	// Workers sync budgets concurrently (kube runs 1).
	Workers int
	// DeletionTimeout is how long an evicted pod may take to be deleted
	// before it counts again (kube's DeletionTimeout, 2 minutes).
	DeletionTimeout time.Duration
	// StalePodDisruptionTimeout is how long a pod marked DisruptionTarget
	// by an eviction may stay undeleted before the mark is reset (kube's
	// stalePodDisruptionTimeout, 2 minutes).
	StalePodDisruptionTimeout time.Duration
	// RetryBase and RetryMax bound the per-budget backoff of failed syncs.
	RetryBase, RetryMax time.Duration
}

// DefaultConfig returns kube's settings.
func DefaultConfig() Config {
	return Config{Workers: 1, DeletionTimeout: 2 * time.Minute, StalePodDisruptionTimeout: 2 * time.Minute, RetryBase: 5 * time.Millisecond, RetryMax: 30 * time.Second}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	switch {
	case c.Workers <= 0:
		return errors.New("disruption: Workers must be positive")
	case c.DeletionTimeout <= 0 || c.StalePodDisruptionTimeout <= 0:
		return errors.New("disruption: DeletionTimeout and StalePodDisruptionTimeout must be positive")
	case c.RetryBase <= 0 || c.RetryMax < c.RetryBase:
		return errors.New("disruption: RetryBase must be positive and RetryMax at least RetryBase")
	}
	return nil
}
