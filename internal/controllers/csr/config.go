package csr

import (
	"errors"
	"fmt"
	"time"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Config configures the approver and the signer. Start from DefaultConfig.
type Config struct {
	// LoopConfig: Workers is the number of requests handled at once by
	// each (kube: 5); RetryBase and RetryMax bound the per-request backoff
	// after a failure.
	kit.LoopConfig
	// Duration is the longest certificate the signer issues (kube's
	// --cluster-signing-duration, one year); a request's
	// expirationSeconds may shorten it.
	Duration time.Duration
}

// DefaultConfig returns kube's defaults.
func DefaultConfig() Config {
	return Config{LoopConfig: kit.DefaultLoopConfig(5), Duration: 365 * 24 * time.Hour}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if err := c.LoopConfig.Validate(); err != nil {
		return fmt.Errorf("csr: %w", err)
	}
	switch {
	case c.Duration < 10*time.Minute:
		return errors.New("csr: Duration must be at least 10 minutes")
	}
	return nil
}
