package api

import (
	"context"
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/litek8s/litek8s/internal/auth"
)

// review fills in the answer of an access review asked by u in namespace
// ns (a LocalSubjectAccessReview's path).
func (s *Server) review(ctx context.Context, u *auth.User, ns string, obj runtime.Object) error {
	switch o := obj.(type) {
	case *authenticationv1.TokenReview:
		return s.tokenReview(ctx, o)
	case *authenticationv1.SelfSubjectReview:
		selfSubjectReview(u, o)
	case *authorizationv1.SelfSubjectAccessReview:
		st, err := s.accessReview(ctx, u, o.Spec.ResourceAttributes, o.Spec.NonResourceAttributes)
		o.Status = st
		return err
	case *authorizationv1.SubjectAccessReview:
		st, err := s.accessReview(ctx, specUser(o.Spec), o.Spec.ResourceAttributes, o.Spec.NonResourceAttributes)
		o.Status = st
		return err
	case *authorizationv1.LocalSubjectAccessReview:
		if ra := o.Spec.ResourceAttributes; ra == nil || ra.Namespace != ns {
			return badRequest("spec.resourceAttributes.namespace must match namespace: %s", ns)
		}
		st, err := s.accessReview(ctx, specUser(o.Spec), o.Spec.ResourceAttributes, nil)
		o.Status = st
		return err
	case *authorizationv1.SelfSubjectRulesReview:
		if o.Spec.Namespace == "" {
			return badRequest("no namespace on request")
		}
		rules, unresolved, err := s.rbac.RulesFor(ctx, u, o.Spec.Namespace)
		if err != nil {
			return err
		}
		o.Status = rulesStatus(rules)
		if len(unresolved) > 0 { // the user's bindings to roles that do not exist, as kube words them
			o.Status.EvaluationError = utilerrors.NewAggregate(unresolved).Error()
		}
	}
	return nil
}

// specUser is the user a SubjectAccessReview asks about.
func specUser(spec authorizationv1.SubjectAccessReviewSpec) *auth.User {
	u := &auth.User{Name: spec.User, UID: spec.UID, Groups: spec.Groups}
	if len(spec.Extra) > 0 {
		u.Extra = map[string][]string{}
		for k, v := range spec.Extra {
			u.Extra[k] = v
		}
	}
	return u
}

// accessReview answers whether u may do what the attributes say.
func (s *Server) accessReview(ctx context.Context, u *auth.User, ra *authorizationv1.ResourceAttributes,
	nra *authorizationv1.NonResourceAttributes) (authorizationv1.SubjectAccessReviewStatus, error) {
	var a auth.Attributes
	switch {
	case ra != nil:
		a = auth.Attributes{User: u, Verb: ra.Verb, ResourceRequest: true, APIGroup: ra.Group, Resource: ra.Resource,
			Subresource: ra.Subresource, Namespace: ra.Namespace, Name: ra.Name}
	case nra != nil:
		a = auth.Attributes{User: u, Verb: nra.Verb, Path: nra.Path}
	default:
		return authorizationv1.SubjectAccessReviewStatus{}, badRequest("resourceAttributes or nonResourceAttributes is required")
	}
	d, err := s.authz.Authorize(ctx, a)
	if err != nil {
		return authorizationv1.SubjectAccessReviewStatus{}, err
	}
	if !d.Allowed {
		return authorizationv1.SubjectAccessReviewStatus{Reason: d.Reason}, nil
	}
	st := authorizationv1.SubjectAccessReviewStatus{Allowed: true}
	if !u.InGroup(auth.GroupMasters) && !d.ByNode {
		st.Reason = "RBAC: allowed"
	}
	return st, nil
}

// rulesStatus lists rules as a SelfSubjectRulesReview's status.
func rulesStatus(rules []rbacv1.PolicyRule) authorizationv1.SubjectRulesReviewStatus {
	st := authorizationv1.SubjectRulesReviewStatus{ResourceRules: []authorizationv1.ResourceRule{},
		NonResourceRules: []authorizationv1.NonResourceRule{}}
	for _, r := range rules {
		if len(r.NonResourceURLs) > 0 {
			st.NonResourceRules = append(st.NonResourceRules, authorizationv1.NonResourceRule{Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs})
			continue
		}
		st.ResourceRules = append(st.ResourceRules, authorizationv1.ResourceRule{Verbs: r.Verbs, APIGroups: r.APIGroups,
			Resources: r.Resources, ResourceNames: r.ResourceNames})
	}
	return st
}

// serveReview answers the creation of an access review: 201 with the
// review and its status (JSON), nothing stored.
func (s *Server) serveReview(w http.ResponseWriter, r *http.Request, q *request) error {
	if _, err := negotiate(r, q.res); err != nil {
		return err // e.g. a Table asked for: 406, as kube
	}
	fv, err := parseFieldValidation(r)
	if err != nil {
		return err
	}
	ws := &warnings{}
	obj, err := s.decodeBody(r, q.res, fv, ws)
	if err != nil {
		return err
	}
	if err := s.review(r.Context(), auth.UserFrom(r.Context()), q.namespace, obj); err != nil {
		return err
	}
	ws.write(w)
	raw, err := encode(obj)
	if err != nil {
		return err
	}
	writeRaw(w, http.StatusCreated, raw)
	return nil
}
