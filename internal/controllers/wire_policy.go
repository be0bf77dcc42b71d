package controllers

import (
	"errors"

	"github.com/litek8s/litek8s/internal/controllers/disruption"
	"github.com/litek8s/litek8s/internal/controllers/kit"
	"github.com/litek8s/litek8s/internal/controllers/resourcequota"
)

// policy builds the term's disruption controller (PodDisruptionBudget
// status, which the API's eviction subresource spends) and resourcequota
// controller (ResourceQuota status, which the API's quota admission
// charges).
func policy(kc *kit.Context, cfg Config) []kit.Controller {
	return []kit.Controller{disruption.New(kc, cfg.Policy.Disruption),
		resourcequota.New(kc, cfg.Policy.ResourceQuota)}
}

// PolicyConfig configures them.
type PolicyConfig struct {
	Disruption disruption.Config
	// ResourceQuota configures the resourcequota controller.
	ResourceQuota resourcequota.Config
}

func defaultPolicy() PolicyConfig {
	return PolicyConfig{Disruption: disruption.DefaultConfig(), ResourceQuota: resourcequota.DefaultConfig()}
}

func (c *PolicyConfig) validate() error {
	return errors.Join(c.Disruption.Validate(), c.ResourceQuota.Validate())
}
