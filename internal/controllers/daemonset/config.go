package daemonset

import (
	"errors"
	"time"
)

// Config configures the controller. Start from DefaultConfig.
type Config struct {
	// Workers is the number of DaemonSets synced at once (kube's
	// --concurrent-daemonset-syncs).
	Workers int
	// BurstReplicas is the most pods created or deleted in one sync.
	BurstReplicas int
	// RetryBaseDelay and RetryMaxDelay bound the per-DaemonSet backoff of
	// failed syncs.
	RetryBaseDelay, RetryMaxDelay time.Duration
	// FailedPodBackoff and FailedPodMaxBackoff bound the per-node delay
	// before a failed daemon pod is deleted and replaced (kube: 1 s, 15
	// min).
	FailedPodBackoff, FailedPodMaxBackoff time.Duration
}

// DefaultConfig returns kube's defaults.
func DefaultConfig() Config {
	return Config{Workers: 2, BurstReplicas: 250, RetryBaseDelay: 5 * time.Millisecond, RetryMaxDelay: 30 * time.Second,
		FailedPodBackoff: time.Second, FailedPodMaxBackoff: 15 * time.Minute}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if c.Workers <= 0 || c.BurstReplicas <= 0 || c.RetryBaseDelay <= 0 || c.RetryMaxDelay < c.RetryBaseDelay ||
		c.FailedPodBackoff <= 0 || c.FailedPodMaxBackoff < c.FailedPodBackoff {
		return errors.New("daemonset: Workers and BurstReplicas must be positive, delays positive and ordered")
	}
	return nil
}
