package controllers

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/litek8s/litek8s/internal/kv"
)

// Store is what the controllers read: the member's local replicated store.
type Store interface {
	// Get reads one object; consistent waits for the read index first.
	Get(ctx context.Context, k kv.Key, consistent bool) (*kv.Object, uint64, error)
	// List returns an immutable view of a resource ("" namespace = all).
	List(ctx context.Context, resource, namespace string, consistent bool) (*kv.List, error)
	// Watch streams the changes after rev; kv.ErrExpired when rev is too
	// old.
	Watch(resource, namespace string, rev uint64) (kv.Watcher, error)
	// Revision is the last revision this member applied.
	Revision() uint64
}

// Leadership runs leader-only work (raftstore.Store.RunAsLeader).
type Leadership interface {
	// RunAsLeader calls fn for each term this member leads, after the
	// term's Barrier, with a context cancelled when the term ends; it
	// returns when ctx ends and fn has returned.
	RunAsLeader(ctx context.Context, fn func(ctx context.Context))
}

// Resource is one resource the API serves.
type Resource struct {
	// StoreKey is its name in the store (kv.Key.Resource).
	StoreKey string
	// GVR addresses it over the API; Kind is what ownerReferences call it.
	GVR        schema.GroupVersionResource
	Kind       string
	Namespaced bool
}

// Resources lists the resources served now, built-in and custom.
type Resources func(ctx context.Context) []Resource
