package api

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/litek8s/litek8s/internal/auth"
)

// The answers of authentication.k8s.io's reviews (their rows:
// registry/authentication.go).

// tokenReview authenticates the review's token as a request bearing it
// would be: status.authenticated with the user and the audiences the
// token is good for, or an error saying why not.
func (s *Server) tokenReview(ctx context.Context, o *authenticationv1.TokenReview) error {
	if o.Spec.Token == "" {
		return badRequest("TokenReview.authentication.k8s.io \"\" is invalid: spec.token: Required value: token must not be empty")
	}
	var auds []string
	if len(o.Spec.Audiences) > 0 {
		auds = o.Spec.Audiences
	}
	u, got, err := s.authn.AuthenticateToken(ctx, o.Spec.Token, auds)
	if err != nil {
		o.Status = authenticationv1.TokenReviewStatus{Error: "[invalid bearer token, token lookup failed]"}
		return nil
	}
	o.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: userInfo(u), Audiences: got}
	return nil
}

// selfSubjectReview answers who u is.
func selfSubjectReview(u *auth.User, o *authenticationv1.SelfSubjectReview) {
	o.Status.UserInfo = userInfo(u)
}

// userInfo is u as authentication.k8s.io writes a user.
func userInfo(u *auth.User) authenticationv1.UserInfo {
	ui := authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
	if len(u.Extra) > 0 {
		ui.Extra = map[string]authenticationv1.ExtraValue{}
		for k, v := range u.Extra {
			ui.Extra[k] = v
		}
	}
	return ui
}
