package api

import (
	"context"
	"net/http"
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
	out := make([]ServedResource, 0, len(reg.All()))
	seen := make(map[string]bool, len(reg.All()))
	for _, r := range reg.All() {
		v := r.ServedVerbs()
		if r.Review || seen[r.StoreKey()] ||
			!slices.Contains(v, "list") || !slices.Contains(v, "watch") || !slices.Contains(v, "delete") {
			continue
		}
		seen[r.StoreKey()] = true
		out = append(out, ServedResource{StoreKey: r.StoreKey(), Group: r.Group, Version: r.Version,
			Resource: r.Resource, Kind: r.Kind, Namespaced: r.Namespaced})
	}
	return out
}

// LocalOnly returns the API for in-process clients of this member (the
// controllers): a write that reaches it while this member does not lead is
// answered 503 instead of being relayed to the leader, so that the work of
// a member that lost leadership never lands through its successor.
func (s *Server) LocalOnly() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set(forwardedHeader, "1")
		s.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), localKey{}, true)))
	})
}
