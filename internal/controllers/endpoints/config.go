package endpoints

import (
	"errors"
	"time"
)

// Config configures both controllers. Start from DefaultConfig.
type Config struct {
	// Workers is the number of services each controller syncs at once
	// (kube's --concurrent-endpoint-syncs and
	// --concurrent-service-endpoint-syncs, 5 each).
	Workers int
	// MaxEndpointsPerSlice caps an EndpointSlice (kube's
	// --max-endpoints-per-slice, 100).
	MaxEndpointsPerSlice int
	// RetryBase and RetryMax bound the per-service exponential backoff
	// after a failure (kube: 5 ms to 1000 s).
	RetryBase, RetryMax time.Duration
	// TrackerTimeout is how long the slice controller waits for its
	// informer to show a slice it wrote before it syncs the service
	// anyway.
	TrackerTimeout time.Duration
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{Workers: 2, MaxEndpointsPerSlice: 100, RetryBase: 5 * time.Millisecond, RetryMax: 30 * time.Second,
		TrackerTimeout: 10 * time.Second}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	switch {
	case c.Workers <= 0:
		return errors.New("endpoints: Workers must be positive")
	case c.MaxEndpointsPerSlice <= 0 || c.MaxEndpointsPerSlice > 1000:
		return errors.New("endpoints: MaxEndpointsPerSlice must be in 1..1000")
	case c.RetryBase <= 0 || c.RetryMax < c.RetryBase:
		return errors.New("endpoints: RetryBase must be positive and RetryMax at least RetryBase")
	case c.TrackerTimeout <= 0:
		return errors.New("endpoints: TrackerTimeout must be positive")
	}
	return nil
}
