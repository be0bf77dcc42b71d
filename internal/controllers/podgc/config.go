package podgc

import (
	"errors"
	"time"
)

// Config configures the controller. Start from DefaultConfig.
type Config struct {
	// CheckPeriod is how often the pods are checked (kube: 20 s).
	CheckPeriod time.Duration
	// Quarantine is how long a node must be missing before its pods are
	// deleted (kube: 40 s).
	Quarantine time.Duration
}

// DefaultConfig returns kube's defaults.
func DefaultConfig() Config {
	return Config{CheckPeriod: 20 * time.Second, Quarantine: 40 * time.Second}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if c.CheckPeriod <= 0 || c.Quarantine < 0 {
		return errors.New("podgc: CheckPeriod must be positive and Quarantine not negative")
	}
	return nil
}
