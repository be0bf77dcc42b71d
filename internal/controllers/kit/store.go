package kit

import (
	"context"

	"github.com/litek8s/litek8s/internal/kv"
)

// Store is what informers read: the member's local replicated store.
type Store interface {
	// List returns an immutable view of a resource ("" namespace = all).
	List(ctx context.Context, resource, namespace string, consistent bool) (*kv.List, error)
	// Watch streams the changes after rev; kv.ErrExpired when rev is too
	// old.
	Watch(resource, namespace string, rev uint64) (kv.Watcher, error)
}

// Controller is one controller of a term.
type Controller interface {
	// Name is kube's name for it ("deployment", "replicaset", ...).
	Name() string
	// Run works until ctx (the term) ends and returns once every goroutine
	// it started has returned.
	Run(ctx context.Context)
}
