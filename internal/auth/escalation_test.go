package auth

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// kube's wording of a refused grant: the user, her groups, and the
// missing rules one per line, merged per resource and sorted; the
// user's bindings to missing roles appended as resolution errors.
func TestConfirmNoEscalation(t *testing.T) {
	u := &User{Name: "bob", Groups: []string{"devs", GroupAuthenticated}}
	owner := []rbacv1.PolicyRule{rule([]string{"get"}, "", "pods")}
	if err := ConfirmNoEscalation(u, owner, nil, []rbacv1.PolicyRule{rule([]string{"get"}, "", "pods")}); err != nil {
		t.Errorf("covered: %v", err)
	}
	want := `user "bob" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n" +
		`{APIGroups:[""], Resources:["pods"], Verbs:["list" "watch"]}` + "\n" +
		`{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["web"], Verbs:["get"]}` + "\n" +
		`{NonResourceURLs:["/metrics"], Verbs:["get"]}`
	rules := []rbacv1.PolicyRule{urls([]string{"get"}, "/metrics"), rule(readVerbs, "", "pods"),
		{Verbs: []string{"get"}, APIGroups: []string{"apps"}, Resources: []string{"deployments"}, ResourceNames: []string{"web"}}}
	err := ConfirmNoEscalation(u, owner, nil, rules)
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
	gone := apierrors.NewNotFound(rbacv1.Resource("clusterroles"), "gone")
	err = ConfirmNoEscalation(u, owner, []error{gone}, rules)
	if tail := `; resolution errors: [clusterroles.rbac.authorization.k8s.io "gone" not found]`; err == nil || err.Error() != want+tail {
		t.Errorf("with a binding to a missing role: %v", err)
	}
}

// RulesFor reports the bindings whose role is missing and keeps the
// rules it found; RoleRefRules answers a missing role with its NotFound.
func TestRulesForAndRoleRefRules(t *testing.T) {
	bob := &User{Name: "bob", Groups: []string{GroupAuthenticated}}
	subj := []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "bob"}}
	crs := []*rbacv1.ClusterRole{{ObjectMeta: meta("reader", nil), Rules: []rbacv1.PolicyRule{rule(readVerbs, "", "pods")}}}
	roles := []*rbacv1.Role{{ObjectMeta: meta("cm", nil), Rules: []rbacv1.PolicyRule{rule(readVerbs, "", "configmaps")}}}
	roles[0].Namespace = "a"
	crbs := []*rbacv1.ClusterRoleBinding{
		{ObjectMeta: meta("r", nil), Subjects: subj, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "reader"}},
		{ObjectMeta: meta("g", nil), Subjects: subj, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "gone"}}}
	rbs := []*rbacv1.RoleBinding{{ObjectMeta: meta("cm", nil), Subjects: subj, RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "cm"}}}
	rbs[0].Namespace = "a"
	z := &RBAC{Policy: func(context.Context) (*Policy, error) { return NewPolicy(crs, roles, crbs, rbs), nil }}
	rules, unresolved, err := z.RulesFor(t.Context(), bob, "a")
	if err != nil || len(rules) != 2 || len(unresolved) != 1 || !apierrors.IsNotFound(unresolved[0]) {
		t.Errorf("RulesFor = %v, %v, %v; want pods and configmaps, and clusterrole gone unresolved", rules, unresolved, err)
	}
	if r, err := z.RoleRefRules(t.Context(), rbacv1.RoleRef{Kind: "Role", Name: "cm"}, "a"); err != nil || len(r) != 1 {
		t.Errorf("Role a/cm: %v, %v", r, err)
	}
	if _, err := z.RoleRefRules(t.Context(), rbacv1.RoleRef{Kind: "Role", Name: "cm"}, "b"); !apierrors.IsNotFound(err) {
		t.Errorf("Role b/cm: %v, want NotFound", err)
	}
	masters := &User{Name: "root", Groups: []string{GroupMasters}}
	if rules, _, _ := z.RulesFor(t.Context(), masters, ""); ConfirmNoEscalation(masters, rules, nil, FullAuthority()) != nil {
		t.Errorf("system:masters holds %v, want everything", rules)
	}
}

// An aggregated role whose stored rules the controller already wrote
// holds each rule once.
func TestAggregationDedup(t *testing.T) {
	view := aggregated("view", "", "view")
	part := &rbacv1.ClusterRole{ObjectMeta: meta("part", map[string]string{aggregateLabel + "view": "true"}),
		Rules: []rbacv1.PolicyRule{rule(readVerbs, "", "pods")}}
	view.Rules = part.Rules // as written by the aggregation controller
	p := NewPolicy([]*rbacv1.ClusterRole{view, part}, nil, nil, nil)
	if len(p.clusterRoles["view"]) != 1 {
		t.Errorf("view holds %v, want the one rule once", p.clusterRoles["view"])
	}
}
