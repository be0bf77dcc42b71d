package nodelifecycle

import (
	"errors"
	"fmt"
	"time"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Config configures the controller. Start from DefaultConfig.
type Config struct {
	// GracePeriod is how long a node may go without renewing its lease or
	// posting its status before it is Unknown (kube: 40 s).
	GracePeriod time.Duration
	// MonitorPeriod is how often every node is checked (kube: 5 s).
	MonitorPeriod time.Duration
	// LoopConfig: Workers sync nodes concurrently; RetryBase and RetryMax
	// bound the per-node backoff of failed syncs.
	kit.LoopConfig
}

// DefaultConfig returns kube's defaults.
func DefaultConfig() Config {
	return Config{GracePeriod: 40 * time.Second, MonitorPeriod: 5 * time.Second,
		LoopConfig: kit.LoopConfig{Workers: 4, RetryBase: 20 * time.Millisecond, RetryMax: 10 * time.Second}}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if c.GracePeriod <= 0 || c.MonitorPeriod <= 0 {
		return errors.New("nodelifecycle: GracePeriod and MonitorPeriod must be positive")
	}
	if err := c.LoopConfig.Validate(); err != nil {
		return fmt.Errorf("nodelifecycle: %w", err)
	}
	return nil
}
