package apiservice

import (
	"errors"
	"time"
)

// Config configures the controller.
type Config struct {
	// Interval is how often every APIService is checked (kube's available
	// controller rechecks every 30 s and on changes).
	Interval time.Duration
}

// DefaultConfig returns kube-like settings.
func DefaultConfig() Config { return Config{Interval: 10 * time.Second} }

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if c.Interval <= 0 {
		return errors.New("apiservice: Interval must be positive")
	}
	return nil
}
