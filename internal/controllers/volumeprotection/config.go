package volumeprotection

import (
	"errors"
	"time"
)

// Config configures both controllers. Start from DefaultConfig.
type Config struct {
	// Workers is the number of objects each controller processes at once
	// (kube runs 1 per controller).
	Workers int
	// RetryBase and RetryMax bound the per-object exponential backoff
	// after a failure (kube: 5 ms to 1000 s).
	RetryBase, RetryMax time.Duration
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{Workers: 1, RetryBase: 5 * time.Millisecond, RetryMax: 30 * time.Second}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	switch {
	case c.Workers <= 0:
		return errors.New("volumeprotection: Workers must be positive")
	case c.RetryBase <= 0 || c.RetryMax < c.RetryBase:
		return errors.New("volumeprotection: RetryBase must be positive and RetryMax at least RetryBase")
	}
	return nil
}
