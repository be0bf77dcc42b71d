package registry

import (
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// authentication.k8s.io: TokenReview (who is this bearer token: what the
// kubelet's webhook authentication asks) and SelfSubjectReview (who am I:
// `kubectl auth whoami`), created and answered, never stored (the answers:
// internal/api's authentication.go).

func authenticationKinds() []*Resource {
	row := func(plural, kind string, newObj func() runtime.Object) *Resource {
		return &Resource{Group: "authentication.k8s.io", Version: "v1", Resource: plural, Kind: kind,
			Verbs: []string{"create"}, New: newObj, NewList: newObj, Review: true}
	}
	return []*Resource{
		row("selfsubjectreviews", "SelfSubjectReview", NewOf[authenticationv1.SelfSubjectReview]()),
		row("tokenreviews", "TokenReview", NewOf[authenticationv1.TokenReview]()),
	}
}
