package controllers

import (
	"errors"

	"github.com/litek8s/litek8s/internal/controllers/kit"
	"github.com/litek8s/litek8s/internal/controllers/nodelifecycle"
	"github.com/litek8s/litek8s/internal/controllers/podgc"
	"github.com/litek8s/litek8s/internal/controllers/scheduler"
	"github.com/litek8s/litek8s/internal/controllers/simnode"
	"github.com/litek8s/litek8s/internal/controllers/tainteviction"
)

// scheduling builds the term's scheduler (reporting to the member's
// scheduler metrics sm, nil for none), simulated nodes, node lifecycle
// controller, taint eviction controller and pod GC.
func scheduling(kc *kit.Context, cfg Config, sm *scheduler.Metrics) []kit.Controller {
	c := cfg.Scheduling
	out := []kit.Controller{scheduler.New(kc, c.Scheduler, sm), nodelifecycle.New(kc, c.NodeLifecycle),
		tainteviction.New(kc, c.TaintEviction), podgc.New(kc, c.PodGC)}
	if c.SimNodes.Count > 0 {
		out = append(out, simnode.New(kc, c.SimNodes))
	}
	return out
}

// SchedulingConfig configures them.
type SchedulingConfig struct {
	Scheduler scheduler.Config
	// SimNodes are the simulated nodes (none unless SimNodes.Count > 0;
	// the member flag --simulated-nodes sets the count).
	SimNodes      simnode.Config
	NodeLifecycle nodelifecycle.Config
	// PodGC deletes the pods of nodes that are gone.
	PodGC podgc.Config
	// TaintEviction deletes the pods of nodes with NoExecute taints they
	// do not tolerate.
	TaintEviction tainteviction.Config
}

func defaultScheduling() SchedulingConfig {
	return SchedulingConfig{Scheduler: scheduler.DefaultConfig(), SimNodes: simnode.DefaultConfig(),
		NodeLifecycle: nodelifecycle.DefaultConfig(), PodGC: podgc.DefaultConfig(),
		TaintEviction: tainteviction.DefaultConfig()}
}

func (c *SchedulingConfig) validate() error {
	return errors.Join(c.Scheduler.Validate(), c.SimNodes.Validate(), c.NodeLifecycle.Validate(), c.PodGC.Validate(),
		c.TaintEviction.Validate())
}
