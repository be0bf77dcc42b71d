package policy

import (
	"context"
	"fmt"

	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
)

// Store is what the plugin reads: the member's applied state.
type Store interface {
	// Get reads one object; consistent waits for the read index first.
	Get(ctx context.Context, k kv.Key, consistent bool) (*kv.Object, uint64, error)
	// List returns an immutable view of a resource in a namespace ("" = all).
	List(ctx context.Context, resource, namespace string, consistent bool) (*kv.List, error)
}

// Config configures a Plugin.
type Config struct {
	// Store holds the policies, bindings, params, namespaces and CRDs.
	Store Store
	// Builtin lists the built-in kinds a paramKind may name (custom
	// resources are found through their CRDs in Store). Default:
	// registry.Builtin().
	Builtin []*registry.Resource
	// Authorizer answers the `authorizer` variable of CEL expressions
	// (see Authorizer). Optional: without one every check is NoOpinion
	// ("no authorizer configured").
	Authorizer authorizer.UnconditionalAuthorizer
}

// DefaultConfig returns a Config with the built-in kinds; Store must be set.
func DefaultConfig() Config {
	return Config{Builtin: registry.Builtin()}
}

// Validate reports a Config that cannot work.
func (c *Config) Validate() error {
	if c.Store == nil {
		return fmt.Errorf("%w: no Store", ErrConfig)
	}
	return nil
}
