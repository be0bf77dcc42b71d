package namespace

import (
	"errors"
	"fmt"
	"time"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Config configures the namespace controller. Start from DefaultConfig.
type Config struct {
	// LoopConfig: Workers is the number of namespaces processed at once
	// (kube's --concurrent-namespace-syncs, 10; litek8s deletes in
	// process); RetryBase and RetryMax bound the per-namespace exponential
	// backoff after a failure (kube: 5 ms to 60 s).
	kit.LoopConfig
	// DeletionDelay is how long an event about a namespace being deleted
	// waits before the namespace is processed (kube: 5 s; see doc.go).
	// litek8s's admission and writes are serialized on the leader, so a
	// shorter wait covers the creates in flight.
	DeletionDelay time.Duration
	// RecheckMin and RecheckMax bound the delay before a namespace whose
	// content is not gone yet is looked at again; it doubles from one to
	// the other while content remains (kube waits half its estimate plus
	// a second: 8.5 s for content held by finalizers).
	RecheckMin, RecheckMax time.Duration
	// ForcePods deletes the pods of a namespace with gracePeriodSeconds 0,
	// as the API's deletion loop did before this controller: no kubelet
	// confirms that containers stopped. Set it to false once kubelets
	// (simulated nodes) finish pod deletions: pods then get their own
	// grace period, as in kube.
	ForcePods bool
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{LoopConfig: kit.LoopConfig{Workers: 4, RetryBase: 5 * time.Millisecond, RetryMax: 60 * time.Second},
		DeletionDelay: 2 * time.Second,
		RecheckMin:    500 * time.Millisecond, RecheckMax: 15 * time.Second,
		ForcePods: true}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if err := c.LoopConfig.Validate(); err != nil {
		return fmt.Errorf("namespace: %w", err)
	}
	switch {
	case c.DeletionDelay < 0:
		return errors.New("namespace: DeletionDelay must not be negative")
	case c.RecheckMin <= 0 || c.RecheckMax < c.RecheckMin:
		return errors.New("namespace: RecheckMin must be positive and RecheckMax at least RecheckMin")
	}
	return nil
}
