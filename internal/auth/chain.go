package auth

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Chain authorizes as kube-apiserver with --authorization-mode=Node,RBAC:
// the Node authorizer first (nodes only), then RBAC. A refusal carries the
// reasons the authorizers gave.
type Chain struct {
	Node *NodeAuthorizer // nil: no Node authorizer
	RBAC *RBAC
}

// Decision is an authorization's answer.
type Decision struct {
	Allowed bool
	// Reason says why a request was refused (or, from RBAC, allowed);
	// empty when no authorizer said.
	Reason string
	// ByNode: the Node authorizer allowed it.
	ByNode bool
}

// Authorize decides a.
func (c *Chain) Authorize(ctx context.Context, a Attributes) (Decision, error) {
	var reason string
	if c.Node != nil {
		ok, why, err := c.Node.Authorize(ctx, a)
		if err != nil {
			return Decision{}, err
		}
		if ok {
			return Decision{Allowed: true, ByNode: true}, nil
		}
		reason = why
	}
	ok, err := c.RBAC.Authorize(ctx, a)
	if err != nil || !ok {
		return Decision{Reason: reason}, err
	}
	return Decision{Allowed: true}, nil
}

// ForbiddenBecause is kube's 403 for a refused request with the
// authorizers' reason appended.
func ForbiddenBecause(a Attributes, reason string) error {
	if reason == "" {
		return Forbidden(a)
	}
	gr := schema.GroupResource{}
	if a.ResourceRequest {
		gr = schema.GroupResource{Group: a.APIGroup, Resource: a.Resource}
	}
	return apierrors.NewForbidden(gr, a.Name, errors.New(a.forbiddenMessage()+": "+reason))
}
