package endpoints

import (
	"errors"
	"fmt"
	"time"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Config configures both controllers. Start from DefaultConfig.
type Config struct {
	// LoopConfig: Workers is the number of services each controller syncs
	// at once (kube's --concurrent-endpoint-syncs and
	// --concurrent-service-endpoint-syncs, 5 each); RetryBase and RetryMax
	// bound the per-service exponential backoff after a failure (kube:
	// 5 ms to 1000 s).
	kit.LoopConfig
	// MaxEndpointsPerSlice caps an EndpointSlice (kube's
	// --max-endpoints-per-slice, 100).
	MaxEndpointsPerSlice int
	// TrackerTimeout is how long the slice controller waits for its
	// informer to show a slice it wrote before it syncs the service
	// anyway.
	TrackerTimeout time.Duration
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{LoopConfig: kit.DefaultLoopConfig(2), MaxEndpointsPerSlice: 100,
		TrackerTimeout: 10 * time.Second}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if err := c.LoopConfig.Validate(); err != nil {
		return fmt.Errorf("endpoints: %w", err)
	}
	switch {
	case c.MaxEndpointsPerSlice <= 0 || c.MaxEndpointsPerSlice > 1000:
		return errors.New("endpoints: MaxEndpointsPerSlice must be in 1..1000")
	case c.TrackerTimeout <= 0:
		return errors.New("endpoints: TrackerTimeout must be positive")
	}
	return nil
}
