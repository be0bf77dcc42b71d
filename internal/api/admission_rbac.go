package api

import (
	"context"
	"errors"

	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/litek8s/litek8s/internal/auth"
)

// RBAC escalation prevention, kube's policybased storages of roles,
// clusterroles, rolebindings and clusterrolebindings: a writer may store
// a Role or ClusterRole only if she already holds every permission it
// grants (in its namespace plus cluster-wide for a Role, cluster-wide for
// a ClusterRole) or holds the escalate verb on it, and a binding only if
// she holds bind on the role it references or every permission of that
// role in the binding's namespace. Members of system:masters skip it.
// Setting or changing an aggregationRule needs every permission (it can
// gather anything). An update that changes only what the garbage
// collector changes (ownerReferences, finalizers, managedFields) is not
// checked. Writes a follower relays are decided on the leader, with the
// relayed user.

// rbacEscalation checks a create (old nil) or update of one of the four
// RBAC kinds; other kinds pass at the cost of a type switch.
func (s *Server) rbacEscalation(ctx context.Context, a *writeAttrs) error {
	switch a.obj.(type) {
	case *rbacv1.Role, *rbacv1.ClusterRole, *rbacv1.RoleBinding, *rbacv1.ClusterRoleBinding:
	default:
		return nil
	}
	if a.user.InGroup(auth.GroupMasters) || onlyGCFields(a.obj, a.old) {
		return nil
	}
	switch o := a.obj.(type) {
	case *rbacv1.Role:
		return s.confirmRole(ctx, a, o.Name, o.Rules, false)
	case *rbacv1.ClusterRole:
		agg := o.AggregationRule != nil && len(o.AggregationRule.ClusterRoleSelectors) > 0
		if old, ok := a.old.(*rbacv1.ClusterRole); ok && old.AggregationRule != nil && len(old.AggregationRule.ClusterRoleSelectors) > 0 {
			agg = true
		}
		return s.confirmRole(ctx, a, o.Name, o.Rules, agg)
	case *rbacv1.RoleBinding:
		return s.confirmBinding(ctx, a, o.Name, o.RoleRef)
	case *rbacv1.ClusterRoleBinding:
		return s.confirmBinding(ctx, a, o.Name, o.RoleRef)
	}
	return nil
}

// confirmRole allows a role write when the writer holds escalate on it
// (the name on the URL: resourceNames match updates and applies, not a
// POST) or already holds its rules; aggregation asks for every
// permission.
func (s *Server) confirmRole(ctx context.Context, a *writeAttrs, name string, rules []rbacv1.PolicyRule, aggregation bool) error {
	ok, err := s.authorized(ctx, auth.Attributes{User: a.user, Verb: "escalate", ResourceRequest: true,
		APIGroup: a.q.res.Group, Resource: a.q.res.Resource, Namespace: a.q.namespace, Name: a.q.name})
	if err != nil || ok {
		return err
	}
	owner, unresolved, err := s.rbac.RulesFor(ctx, a.user, a.q.namespace)
	if err != nil {
		return err
	}
	if err := auth.ConfirmNoEscalation(a.user, owner, unresolved, rules); err != nil {
		return apierrors.NewForbidden(a.q.res.GroupResource(), name, err)
	}
	if aggregation && auth.ConfirmNoEscalation(a.user, owner, nil, auth.FullAuthority()) != nil {
		return apierrors.NewForbidden(a.q.res.GroupResource(), name, errors.New("must have cluster-admin privileges to use the aggregationRule"))
	}
	return nil
}

// confirmBinding allows a binding write when the writer holds bind on
// the referenced role (resourceNames: the role's name; namespace: the
// binding's) or every permission that role grants in the binding's
// namespace. A role that does not exist can be bound only with bind:
// otherwise the answer is its NotFound, as kube's.
func (s *Server) confirmBinding(ctx context.Context, a *writeAttrs, name string, ref rbacv1.RoleRef) error {
	resource := map[string]string{"ClusterRole": "clusterroles", "Role": "roles"}[ref.Kind]
	if resource == "" { // what validation would answer, before anything is resolved
		return apierrors.NewInvalid(a.q.res.GVK().GroupKind(), name, field.ErrorList{
			field.NotSupported(field.NewPath("roleRef", "kind"), ref.Kind, []string{"ClusterRole", "Role"})})
	}
	ok, err := s.authorized(ctx, auth.Attributes{User: a.user, Verb: "bind", ResourceRequest: true,
		APIGroup: ref.APIGroup, Resource: resource, Namespace: a.q.namespace, Name: ref.Name})
	if err != nil || ok {
		return err
	}
	rules, err := s.rbac.RoleRefRules(ctx, ref, a.q.namespace)
	if err != nil {
		return err
	}
	owner, unresolved, err := s.rbac.RulesFor(ctx, a.user, a.q.namespace)
	if err != nil {
		return err
	}
	if err := auth.ConfirmNoEscalation(a.user, owner, unresolved, rules); err != nil {
		return apierrors.NewForbidden(a.q.res.GroupResource(), name, err)
	}
	return nil
}

// authorized asks the authorizer chain (Node, RBAC) about a.
func (s *Server) authorized(ctx context.Context, a auth.Attributes) (bool, error) {
	d, err := s.authz.Authorize(ctx, a)
	return d.Allowed, err
}

// onlyGCFields reports whether an update changes nothing but the fields
// the garbage collector writes (kube's IsOnlyMutatingGCFields).
func onlyGCFields(obj, old runtime.Object) bool {
	if old == nil {
		return false
	}
	cp := obj.DeepCopyObject()
	m, err := apimeta.Accessor(cp)
	if err != nil {
		return false
	}
	om, err := apimeta.Accessor(old)
	if err != nil {
		return false
	}
	m.SetOwnerReferences(om.GetOwnerReferences())
	m.SetFinalizers(om.GetFinalizers())
	m.SetManagedFields(om.GetManagedFields())
	return apiequality.Semantic.DeepEqual(cp, old)
}
