package controllers

import "github.com/litek8s/litek8s/internal/controllers/kit"

// scheduling builds the term's the scheduler, the simulated nodes and node lifecycle controllers.
func scheduling(kc *kit.Context, cfg Config) []kit.Controller {
	return nil
}

// SchedulingConfig configures them.
type SchedulingConfig struct{}

func defaultScheduling() SchedulingConfig { return SchedulingConfig{} }

func (c *SchedulingConfig) validate() error { return nil }
