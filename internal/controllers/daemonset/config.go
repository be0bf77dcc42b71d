package daemonset

import (
	"errors"
	"fmt"
	"time"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Config configures the controller. Start from DefaultConfig.
type Config struct {
	// LoopConfig: Workers is the number of DaemonSets synced at once (kube's
	// --concurrent-daemonset-syncs); RetryBase and RetryMax bound the
	// per-DaemonSet backoff of failed syncs.
	kit.LoopConfig
	// BurstReplicas is the most pods created or deleted in one sync.
	BurstReplicas int
	// FailedPodBackoff and FailedPodMaxBackoff bound the per-node delay
	// before a failed daemon pod is deleted and replaced (kube: 1 s, 15
	// min).
	FailedPodBackoff, FailedPodMaxBackoff time.Duration
}

// DefaultConfig returns kube's defaults.
func DefaultConfig() Config {
	return Config{LoopConfig: kit.DefaultLoopConfig(2), BurstReplicas: 250,
		FailedPodBackoff: time.Second, FailedPodMaxBackoff: 15 * time.Minute}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if err := c.LoopConfig.Validate(); err != nil {
		return fmt.Errorf("daemonset: %w", err)
	}
	if c.BurstReplicas <= 0 || c.FailedPodBackoff <= 0 || c.FailedPodMaxBackoff < c.FailedPodBackoff {
		return errors.New("daemonset: BurstReplicas must be positive, FailedPodBackoff positive and FailedPodMaxBackoff at least FailedPodBackoff")
	}
	return nil
}
