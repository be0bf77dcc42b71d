package nodelifecycle

import (
	"errors"
	"time"
)

// Config configures the controller. Start from DefaultConfig.
type Config struct {
	// GracePeriod is how long a node may go without renewing its lease or
	// posting its status before it is Unknown (kube: 40 s).
	GracePeriod time.Duration
	// MonitorPeriod is how often every node is checked (kube: 5 s).
	MonitorPeriod time.Duration
	// Workers sync nodes concurrently.
	Workers int
}

// DefaultConfig returns kube's defaults.
func DefaultConfig() Config {
	return Config{GracePeriod: 40 * time.Second, MonitorPeriod: 5 * time.Second, Workers: 4}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	switch {
	case c.GracePeriod <= 0 || c.MonitorPeriod <= 0:
		return errors.New("nodelifecycle: GracePeriod and MonitorPeriod must be positive")
	case c.Workers <= 0:
		return errors.New("nodelifecycle: Workers must be positive")
	}
	return nil
}
