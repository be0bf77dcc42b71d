package controllers

import "github.com/litek8s/litek8s/internal/controllers/kit"

// workloads builds the term's deployment, replicaset and job controllers.
func workloads(kc *kit.Context, cfg Config) []kit.Controller {
	return nil
}

// WorkloadsConfig configures them.
type WorkloadsConfig struct{}

func defaultWorkloads() WorkloadsConfig { return WorkloadsConfig{} }

func (c *WorkloadsConfig) validate() error { return nil }
