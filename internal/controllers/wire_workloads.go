package controllers

import (
	"errors"

	"github.com/litek8s/litek8s/internal/controllers/cronjob"
	"github.com/litek8s/litek8s/internal/controllers/daemonset"
	"github.com/litek8s/litek8s/internal/controllers/deployment"
	"github.com/litek8s/litek8s/internal/controllers/job"
	"github.com/litek8s/litek8s/internal/controllers/kit"
	"github.com/litek8s/litek8s/internal/controllers/replicaset"
	"github.com/litek8s/litek8s/internal/controllers/statefulset"
)

// workloads builds the term's deployment, replicaset, replicationcontroller,
// job, statefulset, daemonset and cronjob controllers.
func workloads(kc *kit.Context, cfg Config) []kit.Controller {
	w := cfg.Workloads
	return []kit.Controller{
		deployment.New(kc, w.Deployment),
		replicaset.New(kc, w.ReplicaSet),
		replicaset.NewReplicationController(kc, w.ReplicationController),
		job.New(kc, w.Job),
		statefulset.New(kc, w.StatefulSet),
		daemonset.New(kc, w.DaemonSet),
		cronjob.New(kc, w.CronJob),
	}
}

// WorkloadsConfig configures them.
type WorkloadsConfig struct {
	Deployment  deployment.Config
	ReplicaSet  replicaset.Config
	Job         job.Config
	StatefulSet statefulset.Config
	DaemonSet   daemonset.Config
	CronJob     cronjob.Config

	// ReplicationController is the ReplicaSet controller's Config for
	// ReplicationControllers (kube's --concurrent-rc-syncs is Workers).
	ReplicationController replicaset.Config
}

func defaultWorkloads() WorkloadsConfig {
	return WorkloadsConfig{Deployment: deployment.DefaultConfig(), ReplicaSet: replicaset.DefaultConfig(),
		Job: job.DefaultConfig(), StatefulSet: statefulset.DefaultConfig(),
		DaemonSet: daemonset.DefaultConfig(),
		CronJob:   cronjob.DefaultConfig(), ReplicationController: replicaset.DefaultConfig()}
}

func (c *WorkloadsConfig) validate() error {
	return errors.Join(c.Deployment.Validate(), c.ReplicaSet.Validate(), c.Job.Validate(), c.StatefulSet.Validate(), c.DaemonSet.Validate(),
		c.CronJob.Validate(), c.ReplicationController.Validate())
}
