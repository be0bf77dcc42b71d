package api

import (
	"context"
	"encoding/json"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/litek8s/litek8s/internal/auth"
	"github.com/litek8s/litek8s/internal/kv"
)

// nodeTokenRestriction: a node asks tokens only bound to a pod of its own
// (by name and UID), for no audience or one that pod's projected
// serviceAccountToken volumes name (kube's ServiceAccountNodeAudienceRestriction;
// TODO: the audiences of the pod's CSI drivers), unless RBAC grants
// request-serviceaccounts-token-audience on it. Other users pass.
func (s *Server) nodeTokenRestriction(ctx context.Context, q *request, tr *authenticationv1.TokenRequest) error {
	u := auth.UserFrom(ctx)
	node, isNode := auth.NodeName(u)
	if !isNode {
		return nil
	}
	ref := tr.Spec.BoundObjectRef
	if ref == nil || ref.APIVersion != "v1" || ref.Kind != "Pod" || ref.Name == "" {
		return nodeForbidden(q, q.name, "node requested token not bound to a pod")
	}
	if ref.UID == "" {
		return nodeForbidden(q, q.name, "node requested token with a pod binding without a uid")
	}
	cur, _, err := s.store.Get(ctx, kv.Key{Resource: "pods", Namespace: q.namespace, Name: ref.Name}, false)
	if err != nil {
		return storeErr(err, s.registry().Lookup("v1", "pods"), ref.Name)
	}
	pod := &corev1.Pod{}
	if err := json.Unmarshal(cur.Raw, pod); err != nil {
		return err
	}
	switch {
	case ref.UID != pod.UID:
		return nodeForbidden(q, q.name, "the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID)
	case pod.Spec.NodeName != node:
		return nodeForbidden(q, q.name, "node requested token bound to a pod scheduled on a different node")
	case len(tr.Spec.Audiences) > 1:
		return nodeForbidden(q, q.name, "node may only request 0 or 1 audiences")
	}
	audience := ""
	if len(tr.Spec.Audiences) == 1 {
		audience = tr.Spec.Audiences[0]
	}
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.ServiceAccountToken != nil && src.ServiceAccountToken.Audience == audience {
				return nil
			}
		}
	}
	d, err := s.authz.Authorize(ctx, auth.Attributes{User: u, Verb: "request-serviceaccounts-token-audience",
		ResourceRequest: true, Resource: audience, Namespace: q.namespace, Name: q.name})
	if err != nil {
		return err
	}
	if !d.Allowed {
		return nodeForbidden(q, q.name, "%s is not authorized to request tokens for audience %q", u.Name, audience)
	}
	return nil
}
