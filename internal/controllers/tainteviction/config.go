package tainteviction

import "errors"

// Config configures the controller. Start from DefaultConfig.
type Config struct {
	// Workers sync pods concurrently.
	Workers int
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config { return Config{Workers: 2} }

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if c.Workers <= 0 {
		return errors.New("tainteviction: Workers must be positive")
	}
	return nil
}
