package registry

import (
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// authorization.k8s.io: access reviews are created, never stored; RBAC's
// answer comes back in the created object's status. That is what
// `kubectl auth can-i` (SelfSubjectAccessReview) and `kubectl auth can-i
// --list` (SelfSubjectRulesReview) ask.

func authorizationKinds() []*Resource {
	create := []string{"create"}
	row := func(plural, kind string, namespaced bool, newObj func() runtime.Object) *Resource {
		return &Resource{Group: "authorization.k8s.io", Version: "v1", Resource: plural, Kind: kind,
			Singular: "", Namespaced: namespaced, Verbs: create, New: newObj, NewList: newObj, Review: true}
	}
	return []*Resource{
		row("localsubjectaccessreviews", "LocalSubjectAccessReview", true, NewOf[authorizationv1.LocalSubjectAccessReview]()),
		row("selfsubjectaccessreviews", "SelfSubjectAccessReview", false, NewOf[authorizationv1.SelfSubjectAccessReview]()),
		row("selfsubjectrulesreviews", "SelfSubjectRulesReview", false, NewOf[authorizationv1.SelfSubjectRulesReview]()),
		row("subjectaccessreviews", "SubjectAccessReview", false, NewOf[authorizationv1.SubjectAccessReview]()),
	}
}
