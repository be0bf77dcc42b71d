package api

import (
	"context"

	"github.com/litek8s/litek8s/internal/kv"
)

// Store is what the API needs from the replicated store.
type Store interface {
	// Get reads one object; consistent waits for the read index first.
	Get(ctx context.Context, k kv.Key, consistent bool) (*kv.Object, uint64, error)
	// List returns an immutable view of a resource in a namespace ("" = all).
	List(ctx context.Context, resource, namespace string, consistent bool) (*kv.List, error)
	// ListAt returns the state at revision rev (kv.ErrExpired when no
	// longer kept): continue tokens and exact resourceVersions.
	ListAt(ctx context.Context, resource, namespace string, rev uint64) (*kv.List, error)
	// Watch streams changes after rev; kv.ErrExpired when rev is too old.
	Watch(resource, namespace string, rev uint64) (kv.Watcher, error)
	// Propose replicates a write (leader only) and returns the stored object.
	Propose(ctx context.Context, w kv.Write) (*kv.Object, error)
	// Leader returns the leader's API URL, whether it is this member, and
	// whether a leader is known.
	Leader() (apiURL string, self bool, ok bool)
	// Ready reports whether this member may serve.
	Ready() bool
	// Revision is the last revision this member applied; WaitRevision
	// waits until it reaches rev.
	Revision() uint64
	WaitRevision(ctx context.Context, rev uint64) error
}
