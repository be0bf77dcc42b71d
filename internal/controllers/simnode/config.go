package simnode

import (
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// maxNodes is what the address plan holds: node i's pods get
// 10.(64+i/256).(i%256).0/24.
const maxNodes = 192 * 256

// Config configures the simulated nodes. Start from DefaultConfig.
type Config struct {
	// Count is the number of simulated nodes; 0 runs none.
	Count int
	// NamePrefix precedes the node's index in its name.
	NamePrefix string
	// CPU, Memory, EphemeralStorage and Pods are each node's capacity
	// (and allocatable).
	CPU, Memory, EphemeralStorage resource.Quantity
	Pods                          int64
	// LeaseInterval is how often a node's Lease is renewed (kubelet: 10 s);
	// LeaseDuration is the Lease's leaseDurationSeconds (kubelet: 40 s).
	LeaseInterval, LeaseDuration time.Duration
	// StatusInterval is how often an unchanged node status is posted
	// again (kubelet's nodeStatusReportFrequency: 5 min).
	StatusInterval time.Duration
	// JobPodDuration is how long a Job's pod runs before it Succeeds.
	JobPodDuration time.Duration
	// Workers serve the pods' status updates and deletions.
	Workers int
	// Taints are put on every simulated node when it registers (as the
	// kubelet's --register-with-taints): only pods that tolerate them run
	// there. A node that already exists keeps its taints.
	Taints []corev1.Taint
}

// DefaultConfig returns the defaults: no nodes, each 32 cpu, 256Gi of
// memory and 110 pods when there are some.
func DefaultConfig() Config {
	return Config{NamePrefix: "sim-node-", CPU: resource.MustParse("32"), Memory: resource.MustParse("256Gi"),
		EphemeralStorage: resource.MustParse("1Ti"), Pods: 110,
		LeaseInterval: 10 * time.Second, LeaseDuration: 40 * time.Second, StatusInterval: 5 * time.Minute,
		JobPodDuration: time.Second, Workers: 16}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	switch {
	case c.Count < 0 || c.Count > maxNodes:
		return fmt.Errorf("simnode: Count must be between 0 and %d", maxNodes)
	case c.Count == 0:
		return nil
	case c.NamePrefix == "":
		return errors.New("simnode: NamePrefix is required")
	case c.CPU.Sign() <= 0 || c.Memory.Sign() <= 0 || c.EphemeralStorage.Sign() < 0:
		return errors.New("simnode: CPU and Memory must be positive")
	case c.Pods <= 0 || c.Pods > 253:
		return errors.New("simnode: Pods must be between 1 and 253 (one /24 of pod IPs per node)")
	case c.LeaseInterval <= 0 || c.LeaseDuration < c.LeaseInterval || c.StatusInterval <= 0:
		return errors.New("simnode: LeaseInterval and StatusInterval must be positive, LeaseDuration at least LeaseInterval")
	case c.JobPodDuration < 0:
		return errors.New("simnode: JobPodDuration must not be negative")
	case c.Workers <= 0:
		return errors.New("simnode: Workers must be positive")
	}
	return validateTaints(c.Taints)
}
