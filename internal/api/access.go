package api

import (
	"net/http"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// authorization.k8s.io: access reviews are created, never stored; the
// answer comes back in the created object's status. Until RBAC (issue 8)
// every authenticated user holds the admin token and may do everything, so
// every review is allowed — which is what `kubectl auth can-i` shows an
// admin on kube.

func authorizationKinds() []*resource {
	create := []string{"create"}
	row := func(plural, kind string, namespaced bool, newObj func() runtime.Object) *resource {
		return &resource{Group: "authorization.k8s.io", Version: "v1", Resource: plural, Kind: kind,
			Singular: "", Namespaced: namespaced, Verbs: create, New: newObj, NewList: newObj, Review: review}
	}
	return []*resource{
		row("localsubjectaccessreviews", "LocalSubjectAccessReview", true, newOf[authorizationv1.LocalSubjectAccessReview]()),
		row("selfsubjectaccessreviews", "SelfSubjectAccessReview", false, newOf[authorizationv1.SelfSubjectAccessReview]()),
		row("selfsubjectrulesreviews", "SelfSubjectRulesReview", false, newOf[authorizationv1.SelfSubjectRulesReview]()),
		row("subjectaccessreviews", "SubjectAccessReview", false, newOf[authorizationv1.SubjectAccessReview]()),
	}
}

// review fills in the answer of an access review.
func review(obj runtime.Object) {
	allowed := authorizationv1.SubjectAccessReviewStatus{Allowed: true}
	switch o := obj.(type) {
	case *authorizationv1.SelfSubjectAccessReview:
		o.Status = allowed
	case *authorizationv1.SubjectAccessReview:
		o.Status = allowed
	case *authorizationv1.LocalSubjectAccessReview:
		o.Status = allowed
	case *authorizationv1.SelfSubjectRulesReview:
		all := []string{"*"}
		o.Status = authorizationv1.SubjectRulesReviewStatus{
			ResourceRules:    []authorizationv1.ResourceRule{{Verbs: all, APIGroups: all, Resources: all}},
			NonResourceRules: []authorizationv1.NonResourceRule{{Verbs: all, NonResourceURLs: all}},
		}
	}
}

// serveReview answers the creation of an access review: 201 with the
// review and its status, nothing stored.
func (s *Server) serveReview(w http.ResponseWriter, r *http.Request, q *request) error {
	fv, err := parseFieldValidation(r)
	if err != nil {
		return err
	}
	ws := &warnings{}
	obj, err := s.decodeBody(r, q.res, fv, ws)
	if err != nil {
		return err
	}
	ws.write(w)
	q.res.Review(obj)
	raw, err := encode(obj)
	if err != nil {
		return err
	}
	writeRaw(w, http.StatusCreated, raw)
	return nil
}
