package auth

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/component-helpers/auth/rbac/validation"
)

// RBAC escalation prevention (kube's pkg/registry/rbac policybased
// storages): a user may grant through a Role, ClusterRole or binding only
// permissions she already holds. The API server decides when to ask
// (escalate and bind verbs, system:masters); this file answers what the
// user holds, what a roleRef grants, and words the refusal as kube does.

// RoleRefRules returns the rules ref grants in a binding of namespace ns
// ("" for a ClusterRoleBinding), aggregation applied. A role that does not
// exist is kube's NotFound for it.
func (z *RBAC) RoleRefRules(ctx context.Context, ref rbacv1.RoleRef, ns string) ([]rbacv1.PolicyRule, error) {
	p, err := z.Policy(ctx)
	if err != nil {
		return nil, err
	}
	return p.roleRefRules(ref, ns)
}

// roleRefRules is RoleRefRules on p.
func (p *Policy) roleRefRules(ref rbacv1.RoleRef, ns string) ([]rbacv1.PolicyRule, error) {
	switch ref.Kind {
	case "ClusterRole":
		rules, ok := p.clusterRoles[ref.Name]
		if !ok {
			return nil, apierrors.NewNotFound(rbacv1.Resource("clusterroles"), ref.Name)
		}
		return rules, nil
	case "Role":
		rules, ok := p.roles[ns][ref.Name]
		if !ok {
			return nil, apierrors.NewNotFound(rbacv1.Resource("roles"), ref.Name)
		}
		return rules, nil
	}
	return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
}

// RulesFor returns the rules that apply to u in namespace ns (cluster-wide
// ones included; system:masters holds everything) and the bindings whose
// role could not be resolved, as kube's rule resolver does: the rules
// found still count. It is what SelfSubjectRulesReview answers and what
// escalation prevention compares with.
func (z *RBAC) RulesFor(ctx context.Context, u *User, ns string) ([]rbacv1.PolicyRule, []error, error) {
	if u.InGroup(GroupMasters) {
		return FullAuthority(), nil, nil
	}
	p, err := z.Policy(ctx)
	if err != nil {
		return nil, nil, err
	}
	var rules []rbacv1.PolicyRule
	var unresolved []error
	p.visitRefs(u, ns, func(ref rbacv1.RoleRef, bindingNS string) bool {
		r, err := p.roleRefRules(ref, bindingNS)
		if err != nil {
			unresolved = append(unresolved, err)
		}
		rules = append(rules, r...)
		return true
	})
	return rules, unresolved, nil
}

// FullAuthority is every permission: "*" on every resource and URL (what
// cluster-admin grants, and what an aggregationRule needs).
func FullAuthority() []rbacv1.PolicyRule {
	all := []string{"*"}
	return []rbacv1.PolicyRule{{Verbs: all, APIGroups: all, Resources: all}, {Verbs: all, NonResourceURLs: all}}
}

// ConfirmNoEscalation returns nil when owner (the rules the user u holds)
// covers every one of rules, and otherwise kube's error naming the rules
// not held; unresolved (the user's bindings to missing roles) is appended
// as kube's "resolution errors".
func ConfirmNoEscalation(u *User, owner []rbacv1.PolicyRule, unresolved []error, rules []rbacv1.PolicyRule) error {
	ok, missing := validation.Covers(owner, rules)
	if ok {
		return nil
	}
	var lines []string
	for _, r := range compactRules(missing) {
		if s := compactString(r); !slices.Contains(lines, s) {
			lines = append(lines, s)
		}
	}
	slices.Sort(lines)
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s",
		u.Name, u.Groups, strings.Join(lines, "\n"))
	if len(unresolved) > 0 {
		msg += fmt.Sprintf("; resolution errors: %v", unresolved)
	}
	return errors.New(msg)
}

// compactRules merges the rules that name one API group and one resource
// (and at most one resourceName) and differ only in their verbs, as kube
// lists missing permissions: one line per resource.
func compactRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	type key struct {
		group, resource string
		named           bool
		name            string
	}
	var out []rbacv1.PolicyRule
	simple := map[key]int{} // → index in out
	for _, r := range rules {
		if len(r.ResourceNames) > 1 || len(r.NonResourceURLs) > 0 || len(r.APIGroups) != 1 || len(r.Resources) != 1 ||
			!reflect.DeepEqual(rbacv1.PolicyRule{APIGroups: r.APIGroups, Resources: r.Resources, Verbs: r.Verbs, ResourceNames: r.ResourceNames}, r) {
			out = append(out, r)
			continue
		}
		k := key{group: r.APIGroups[0], resource: r.Resources[0], named: len(r.ResourceNames) == 1}
		if k.named {
			k.name = r.ResourceNames[0]
		}
		if i, ok := simple[k]; ok {
			out[i].Verbs = append(out[i].Verbs, r.Verbs...)
			continue
		}
		simple[k] = len(out)
		out = append(out, *r.DeepCopy())
	}
	return out
}

// compactString words a rule as kube's 403 lists it:
// {APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}.
func compactString(r rbacv1.PolicyRule) string {
	var parts []string
	for _, f := range []struct {
		name string
		v    []string
	}{{"APIGroups", r.APIGroups}, {"Resources", r.Resources}, {"NonResourceURLs", r.NonResourceURLs},
		{"ResourceNames", r.ResourceNames}, {"Verbs", r.Verbs}} {
		if len(f.v) > 0 {
			parts = append(parts, fmt.Sprintf("%s:%q", f.name, f.v))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// dedupRules returns rules without repeats (the first of identical rules
// kept), as kube's aggregation controller writes them.
func dedupRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	out := rules[:0:0]
	for _, r := range rules {
		if !slices.ContainsFunc(out, func(o rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(o, r) }) {
			out = append(out, r)
		}
	}
	return out
}
