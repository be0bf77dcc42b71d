package policy

import (
	"context"

	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/litek8s/litek8s/internal/auth"
)

// AuthorizeFunc decides litek8s authorization attributes (the API
// server's Authorize).
type AuthorizeFunc func(ctx context.Context, a auth.Attributes) (auth.Decision, error)

// Authorizer adapts f to kube's authorizer for CEL's `authorizer`
// variable: allowed is Allow, anything else NoOpinion (as RBAC answers
// kube-apiserver), with the reason given.
func Authorizer(f AuthorizeFunc) authorizer.UnconditionalAuthorizer { return authorizeFunc(f) }

type authorizeFunc AuthorizeFunc

func (f authorizeFunc) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	var u *auth.User
	if ui := a.GetUser(); ui != nil {
		u = &auth.User{Name: ui.GetName(), UID: ui.GetUID(), Groups: ui.GetGroups(), Extra: ui.GetExtra()}
	}
	d, err := f(ctx, auth.Attributes{User: u, Verb: a.GetVerb(), ResourceRequest: a.IsResourceRequest(),
		APIGroup: a.GetAPIGroup(), Resource: a.GetResource(), Subresource: a.GetSubresource(),
		Namespace: a.GetNamespace(), Name: a.GetName(), Path: a.GetPath()})
	switch {
	case err != nil:
		return authorizer.DecisionNoOpinion, "", err
	case d.Allowed:
		return authorizer.DecisionAllow, d.Reason, nil
	}
	return authorizer.DecisionNoOpinion, d.Reason, nil
}
