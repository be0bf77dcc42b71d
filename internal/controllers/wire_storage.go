package controllers

import (
	"github.com/litek8s/litek8s/internal/controllers/kit"
	"github.com/litek8s/litek8s/internal/controllers/pvbinder"
)

// storage builds the term's PersistentVolume binder (the claim and volume
// protection controllers are the cluster term's, wire_cluster.go).
func storage(kc *kit.Context, cfg Config) []kit.Controller {
	return []kit.Controller{pvbinder.New(kc, cfg.Storage.PVBinder)}
}

// StorageConfig configures them.
type StorageConfig struct {
	// PVBinder binds claims to volumes (kube's persistentvolume-binder).
	PVBinder pvbinder.Config
}

func defaultStorage() StorageConfig { return StorageConfig{PVBinder: pvbinder.DefaultConfig()} }

func (c *StorageConfig) validate() error { return c.PVBinder.Validate() }
