package api

import (
	"context"

	"github.com/litek8s/litek8s/internal/api/registry"
)

// The system PriorityClasses kube-apiserver creates at startup (they are
// registry.SystemPriorityClasses).

// EnsureSystemPriorityClasses creates the system PriorityClasses that do
// not exist. Leader only.
func (s *Server) EnsureSystemPriorityClasses(ctx context.Context) error {
	res := s.registry().Lookup("scheduling.k8s.io/v1", "priorityclasses")
	for _, pc := range registry.SystemPriorityClasses() {
		if err := s.ensure(ctx, &request{res: res, name: pc.Name}, pc); err != nil {
			return err
		}
	}
	return nil
}
