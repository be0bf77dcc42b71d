package controllers

import (
	"errors"

	"github.com/litek8s/litek8s/internal/controllers/deployment"
	"github.com/litek8s/litek8s/internal/controllers/job"
	"github.com/litek8s/litek8s/internal/controllers/kit"
	"github.com/litek8s/litek8s/internal/controllers/replicaset"
)

// workloads builds the term's deployment, replicaset and job controllers.
func workloads(kc *kit.Context, cfg Config) []kit.Controller {
	w := cfg.Workloads
	return []kit.Controller{
		deployment.New(kc, w.Deployment),
		replicaset.New(kc, w.ReplicaSet),
		job.New(kc, w.Job),
	}
}

// WorkloadsConfig configures them.
type WorkloadsConfig struct {
	Deployment deployment.Config
	ReplicaSet replicaset.Config
	Job        job.Config
}

func defaultWorkloads() WorkloadsConfig {
	return WorkloadsConfig{Deployment: deployment.DefaultConfig(), ReplicaSet: replicaset.DefaultConfig(),
		Job: job.DefaultConfig()}
}

func (c *WorkloadsConfig) validate() error {
	return errors.Join(c.Deployment.Validate(), c.ReplicaSet.Validate(), c.Job.Validate())
}
