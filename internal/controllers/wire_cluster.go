package controllers

import "github.com/litek8s/litek8s/internal/controllers/kit"

// cluster builds the term's namespace, endpoints/endpointslices and volume protection controllers.
func cluster(kc *kit.Context, cfg Config) []kit.Controller {
	return nil
}

// ClusterConfig configures them.
type ClusterConfig struct{}

func defaultCluster() ClusterConfig { return ClusterConfig{} }

func (c *ClusterConfig) validate() error { return nil }
