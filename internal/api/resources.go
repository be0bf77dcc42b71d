package api

import (
	"context"
	"slices"
)

// ServedResource is one resource the API serves, as the controllers need
// it: where the store keeps it and how to address it over the API.
type ServedResource struct {
	// StoreKey is the resource's name in the store (kv.Key.Resource).
	StoreKey string
	// Group, Version and Resource address it over the API; Kind is what
	// ownerReferences name it by.
	Group, Version, Resource, Kind string
	Namespaced                     bool
}

// Resources returns the stored resources served now, built-in and custom
// (the CRDs are read again when they changed), that can be listed, watched
// and deleted: one per store key, at its first served version. Access
// reviews, which are never stored, are left out.
func (s *Server) Resources(ctx context.Context) []ServedResource {
	reg := s.refreshCRDs(ctx)
	out := make([]ServedResource, 0, len(reg.all))
	seen := make(map[string]bool, len(reg.all))
	for _, r := range reg.all {
		v := r.verbs()
		if r.Review != nil || seen[r.storeKey()] ||
			!slices.Contains(v, "list") || !slices.Contains(v, "watch") || !slices.Contains(v, "delete") {
			continue
		}
		seen[r.storeKey()] = true
		out = append(out, ServedResource{StoreKey: r.storeKey(), Group: r.Group, Version: r.Version,
			Resource: r.Resource, Kind: r.Kind, Namespaced: r.Namespaced})
	}
	return out
}
