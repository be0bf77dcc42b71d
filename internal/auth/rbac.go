package auth

import (
	"context"
	"errors"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Policy is the RBAC objects of one revision of the store, indexed for
// authorization. Build it with NewPolicy; it is read-only afterwards.
type Policy struct {
	clusterRoles map[string][]rbacv1.PolicyRule            // name → rules, aggregation applied
	roles        map[string]map[string][]rbacv1.PolicyRule // namespace → name → rules
	crbs         []*rbacv1.ClusterRoleBinding
	rbs          map[string][]*rbacv1.RoleBinding // by namespace
}

// NewPolicy indexes the stored RBAC objects. A ClusterRole with an
// aggregationRule gets the rules of every ClusterRole its selectors match
// (transitively), which kube's clusterrole-aggregation controller writes
// into the object (package clusterroleaggregation does here): it is also
// applied when authorizing, so a new aggregate-to-* role counts at once,
// before the controller has run (a fresh cluster, a new leader).
func NewPolicy(crs []*rbacv1.ClusterRole, roles []*rbacv1.Role, crbs []*rbacv1.ClusterRoleBinding, rbs []*rbacv1.RoleBinding) *Policy {
	p := &Policy{clusterRoles: map[string][]rbacv1.PolicyRule{}, roles: map[string]map[string][]rbacv1.PolicyRule{},
		crbs: crbs, rbs: map[string][]*rbacv1.RoleBinding{}}
	byName := map[string]*rbacv1.ClusterRole{}
	for _, cr := range crs {
		byName[cr.Name] = cr
	}
	for _, cr := range crs {
		rules := aggregate(cr, crs, map[string]bool{})
		if cr.AggregationRule != nil {
			rules = dedupRules(rules) // once the aggregation controller ran, cr.Rules repeat what it matches
		}
		p.clusterRoles[cr.Name] = rules
	}
	for _, r := range roles {
		if p.roles[r.Namespace] == nil {
			p.roles[r.Namespace] = map[string][]rbacv1.PolicyRule{}
		}
		p.roles[r.Namespace][r.Name] = r.Rules
	}
	for _, b := range rbs {
		p.rbs[b.Namespace] = append(p.rbs[b.Namespace], b)
	}
	return p
}

// aggregate returns cr's rules plus, for an aggregated role, those of the
// roles its selectors match; seen guards against cycles.
func aggregate(cr *rbacv1.ClusterRole, all []*rbacv1.ClusterRole, seen map[string]bool) []rbacv1.PolicyRule {
	if seen[cr.Name] {
		return nil
	}
	seen[cr.Name] = true
	rules := append([]rbacv1.PolicyRule(nil), cr.Rules...)
	if cr.AggregationRule == nil {
		return rules
	}
	for _, ls := range cr.AggregationRule.ClusterRoleSelectors {
		sel, err := metav1.LabelSelectorAsSelector(&ls)
		if err != nil {
			continue // an empty selector matches every ClusterRole, as in kube's controller
		}
		for _, other := range all {
			if other.Name != cr.Name && sel.Matches(labels.Set(other.Labels)) {
				rules = append(rules, aggregate(other, all, seen)...)
			}
		}
	}
	return rules
}

// PolicySource returns the current policy.
type PolicySource func(ctx context.Context) (*Policy, error)

// RBAC authorizes requests with the policy of its source. Members of
// system:masters may do everything without it being asked.
type RBAC struct {
	Policy PolicySource
}

// Authorize reports whether a is allowed.
func (z *RBAC) Authorize(ctx context.Context, a Attributes) (bool, error) {
	if a.User == nil {
		return false, nil
	}
	if a.User.InGroup(GroupMasters) {
		return true, nil
	}
	p, err := z.Policy(ctx)
	if err != nil {
		return false, err
	}
	allowed := false
	p.visit(a.User, a.Namespace, func(rules []rbacv1.PolicyRule) bool {
		for i := range rules {
			if ruleAllows(&a, &rules[i]) {
				allowed = true
				return false
			}
		}
		return true
	})
	return allowed, nil
}

// visit calls f with the rules of every binding that applies to u: the
// ClusterRoleBindings, then the RoleBindings of ns; f returns false to
// stop.
func (p *Policy) visit(u *User, ns string, f func([]rbacv1.PolicyRule) bool) {
	p.visitRefs(u, ns, func(ref rbacv1.RoleRef, bindingNS string) bool {
		var rules []rbacv1.PolicyRule
		switch ref.Kind {
		case "ClusterRole":
			rules = p.clusterRoles[ref.Name]
		case "Role":
			rules = p.roles[bindingNS][ref.Name]
		}
		return f(rules)
	})
}

// visitRefs calls f with the roleRef and namespace ("" for a
// ClusterRoleBinding) of every binding that applies to u: the
// ClusterRoleBindings, then the RoleBindings of ns; f returns false to
// stop.
func (p *Policy) visitRefs(u *User, ns string, f func(ref rbacv1.RoleRef, bindingNS string) bool) {
	for _, b := range p.crbs {
		if b.RoleRef.Kind == "ClusterRole" && bound(b.Subjects, u, "") {
			if !f(b.RoleRef, "") {
				return
			}
		}
	}
	if ns == "" {
		return
	}
	for _, b := range p.rbs[ns] {
		if bound(b.Subjects, u, ns) && !f(b.RoleRef, ns) {
			return
		}
	}
}

// bound reports whether one of subjects is u. A ServiceAccount subject
// without a namespace is in the binding's namespace.
func bound(subjects []rbacv1.Subject, u *User, ns string) bool {
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			if s.Name == u.Name {
				return true
			}
		case rbacv1.GroupKind:
			if u.InGroup(s.Name) {
				return true
			}
		case rbacv1.ServiceAccountKind:
			sns := s.Namespace
			if sns == "" {
				sns = ns
			}
			if sns != "" && u.Name == ServiceAccountUser(sns, s.Name) {
				return true
			}
		}
	}
	return false
}

// Forbidden is kube's 403 for a refused request.
func Forbidden(a Attributes) error {
	gr := schema.GroupResource{}
	if a.ResourceRequest {
		gr = schema.GroupResource{Group: a.APIGroup, Resource: a.Resource}
	}
	return apierrors.NewForbidden(gr, a.Name, errors.New(a.forbiddenMessage()))
}
