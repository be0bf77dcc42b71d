package api

import (
	"context"

	"github.com/litek8s/litek8s/internal/auth"
)

// Authorize decides a as the API authorizes its requests (system:masters,
// then the Node authorizer, then RBAC), for admission plugins that ask
// on a request's behalf (CEL's `authorizer` in admission policies).
func (s *Server) Authorize(ctx context.Context, a auth.Attributes) (auth.Decision, error) {
	if a.User != nil && a.User.InGroup(auth.GroupMasters) {
		return auth.Decision{Allowed: true}, nil
	}
	return s.authz.Authorize(ctx, a)
}
