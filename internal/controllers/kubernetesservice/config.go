package kubernetesservice

import (
	"errors"
	"net/netip"
	"time"
)

// Config configures the controller. Start from DefaultConfig.
type Config struct {
	// ServiceIP is the kubernetes Service's ClusterIP: the first address
	// of the service range (the API's is 10.96.0.0/12, and it reserves
	// 10.96.0.1 for this Service).
	ServiceIP string
	// ServiceCIDR is the service range, the spec of the default
	// ServiceCIDR "kubernetes" (kube's --service-cluster-ip-range).
	ServiceCIDR string
	// Interval is how often the member list is compared with the
	// Endpoints (kube reconciles every 10 s).
	Interval time.Duration
	// MemberTTL is how long after its last report to the leader a member
	// stays listed (kube's endpoint lease TTL is 15 s).
	MemberTTL time.Duration
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{ServiceIP: "10.96.0.1", ServiceCIDR: "10.96.0.0/12", Interval: time.Second, MemberTTL: 5 * time.Second}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if _, err := netip.ParseAddr(c.ServiceIP); err != nil {
		return errors.New("kubernetesservice: ServiceIP must be an IP address")
	}
	if p, err := netip.ParsePrefix(c.ServiceCIDR); err != nil || !p.Contains(netip.MustParseAddr(c.ServiceIP)) {
		return errors.New("kubernetesservice: ServiceCIDR must be a CIDR holding ServiceIP")
	}
	if c.Interval <= 0 || c.MemberTTL <= 0 {
		return errors.New("kubernetesservice: Interval and MemberTTL must be positive")
	}
	return nil
}
