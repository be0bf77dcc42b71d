package controllers

import (
	"github.com/litek8s/litek8s/internal/controllers/disruption"
	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// policy builds the term's disruption controller (PodDisruptionBudget
// status, which the API's eviction subresource spends).
func policy(kc *kit.Context, cfg Config) []kit.Controller {
	return []kit.Controller{disruption.New(kc, cfg.Policy.Disruption)}
}

// PolicyConfig configures it.
type PolicyConfig struct {
	Disruption disruption.Config
}

func defaultPolicy() PolicyConfig { return PolicyConfig{Disruption: disruption.DefaultConfig()} }

func (c *PolicyConfig) validate() error { return c.Disruption.Validate() }
