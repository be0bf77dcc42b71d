package csr

import (
	"errors"
	"time"
)

// Config configures the approver and the signer. Start from DefaultConfig.
type Config struct {
	// Workers is the number of requests handled at once by each (kube: 5).
	Workers int
	// Duration is the longest certificate the signer issues (kube's
	// --cluster-signing-duration, one year); a request's
	// expirationSeconds may shorten it.
	Duration time.Duration
	// RetryBase and RetryMax bound the per-request backoff after a failure.
	RetryBase, RetryMax time.Duration
}

// DefaultConfig returns kube's defaults.
func DefaultConfig() Config {
	return Config{Workers: 5, Duration: 365 * 24 * time.Hour, RetryBase: 5 * time.Millisecond, RetryMax: 30 * time.Second}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	switch {
	case c.Workers <= 0:
		return errors.New("csr: Workers must be positive")
	case c.Duration < 10*time.Minute:
		return errors.New("csr: Duration must be at least 10 minutes")
	case c.RetryBase <= 0 || c.RetryMax < c.RetryBase:
		return errors.New("csr: RetryBase must be positive and RetryMax at least RetryBase")
	}
	return nil
}
