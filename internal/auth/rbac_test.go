package auth

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRuleAllows(t *testing.T) {
	res := func(verb, group, resource, sub, name string) Attributes {
		return Attributes{Verb: verb, ResourceRequest: true, APIGroup: group, Resource: resource, Subresource: sub, Name: name}
	}
	path := func(verb, p string) Attributes { return Attributes{Verb: verb, Path: p} }
	for _, tc := range []struct {
		name string
		rule rbacv1.PolicyRule
		a    Attributes
		want bool
	}{
		{"exact", rule(readVerbs, "", "pods"), res("get", "", "pods", "", "p"), true},
		{"verb missing", rule(readVerbs, "", "pods"), res("delete", "", "pods", "", "p"), false},
		{"other group", rule(readVerbs, "", "pods"), res("get", "apps", "pods", "", ""), false},
		{"group *", rule(readVerbs, "*", "pods"), res("get", "apps", "pods", "", ""), true},
		{"resource does not grant its subresource", rule(readVerbs, "", "pods"), res("get", "", "pods", "log", "p"), false},
		{"subresource", rule(readVerbs, "", "pods/log"), res("get", "", "pods", "log", "p"), true},
		{"*/subresource", rule(readVerbs, "", "*/scale"), res("get", "", "deployments", "scale", "d"), true},
		{"*/subresource not the resource", rule(readVerbs, "", "*/scale"), res("get", "", "deployments", "", "d"), false},
		{"resource *", rule([]string{"*"}, "*", "*"), res("escalate", "rbac.authorization.k8s.io", "roles", "", ""), true},
		{"resourceNames", rbacv1.PolicyRule{Verbs: readVerbs, APIGroups: []string{""}, Resources: []string{"configmaps"},
			ResourceNames: []string{"a"}}, res("get", "", "configmaps", "", "a"), true},
		{"resourceNames other", rbacv1.PolicyRule{Verbs: readVerbs, APIGroups: []string{""}, Resources: []string{"configmaps"},
			ResourceNames: []string{"a"}}, res("get", "", "configmaps", "", "b"), false},
		{"resourceNames list (no name)", rbacv1.PolicyRule{Verbs: readVerbs, APIGroups: []string{""}, Resources: []string{"configmaps"},
			ResourceNames: []string{"a"}}, res("list", "", "configmaps", "", ""), false},
		{"url exact", urls([]string{"get"}, "/healthz"), path("get", "/healthz"), true},
		{"url prefix", urls([]string{"get"}, "/apis/*"), path("get", "/apis/apps/v1"), true},
		{"url prefix not the parent", urls([]string{"get"}, "/apis/*"), path("get", "/apis"), false},
		{"url rule for a resource", urls([]string{"get"}, "*"), res("get", "", "pods", "", ""), false},
		{"resource rule for a url", rule([]string{"get"}, "*", "*"), path("get", "/healthz"), false},
	} {
		if got := ruleAllows(&tc.a, &tc.rule); got != tc.want {
			t.Errorf("%s: ruleAllows = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestPolicyBindingsAndAggregation(t *testing.T) {
	crs := DefaultClusterRoles()
	crs = append(crs, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "widgets-view",
		Labels: map[string]string{aggregateLabel + "view": "true"}},
		Rules: []rbacv1.PolicyRule{rule(readVerbs, "example.com", "widgets")}})
	roles := []*rbacv1.Role{{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "a"},
		Rules: []rbacv1.PolicyRule{rule(allVerbs, "", "configmaps")}}}
	rbs := []*rbacv1.RoleBinding{
		{ObjectMeta: metav1.ObjectMeta{Name: "bot-view", Namespace: "a"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "bot"}}}, // namespace: the binding's
		{ObjectMeta: metav1.ObjectMeta{Name: "alice-cm", Namespace: "a"}, RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "cm"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "alice"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "devs-edit", Namespace: "b"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "edit"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: "devs"}}},
	}
	p := NewPolicy(crs, roles, DefaultClusterRoleBindings(), rbs)
	z := &RBAC{Policy: func(context.Context) (*Policy, error) { return p, nil }}
	bot := serviceAccountUser("a", "bot", "u1")
	alice := &User{Name: "alice", Groups: []string{GroupAuthenticated}}
	dev := &User{Name: "dave", Groups: []string{"devs", GroupAuthenticated}}
	anon := &User{Name: Anonymous, Groups: []string{GroupUnauthenticated}}
	admin := adminUser
	r := func(u *User, verb, group, resource, ns string) Attributes {
		return Attributes{User: u, Verb: verb, ResourceRequest: true, APIGroup: group, Resource: resource, Namespace: ns}
	}
	for _, tc := range []struct {
		name string
		a    Attributes
		want bool
	}{
		{"sa views its namespace", r(bot, "list", "", "configmaps", "a"), true},
		{"sa views deployments (view aggregates system:aggregate-to-view)", r(bot, "watch", "apps", "deployments", "a"), true},
		{"sa views a CRD's widgets (aggregated at once)", r(bot, "get", "example.com", "widgets", "a"), true},
		{"view has no secrets", r(bot, "get", "", "secrets", "a"), false},
		{"view cannot write", r(bot, "create", "", "configmaps", "a"), false},
		{"sa not in another namespace", r(bot, "list", "", "configmaps", "b"), false},
		{"sa not cluster-wide", r(bot, "list", "", "configmaps", ""), false},
		{"role: configmaps", r(alice, "delete", "", "configmaps", "a"), true},
		{"role: not secrets", r(alice, "get", "", "secrets", "a"), false},
		{"group edit: secrets", r(dev, "create", "", "secrets", "b"), true},
		{"edit includes view (aggregated twice)", r(dev, "list", "apps", "replicasets", "b"), true},
		{"edit has no roles", r(dev, "create", "rbac.authorization.k8s.io", "roles", "b"), false},
		{"anonymous", r(anon, "list", "", "configmaps", "a"), false},
		{"anonymous health", Attributes{User: anon, Verb: "get", Path: "/readyz"}, true},
		{"anonymous discovery", Attributes{User: anon, Verb: "get", Path: "/api"}, false},
		{"authenticated discovery", Attributes{User: alice, Verb: "get", Path: "/apis/apps/v1"}, true},
		{"self review", r(alice, "create", "authorization.k8s.io", "selfsubjectaccessreviews", ""), true},
		{"masters", r(admin, "escalate", "rbac.authorization.k8s.io", "clusterroles", ""), true},
		{"nobody", r(nil, "get", "", "pods", "a"), false},
	} {
		got, err := z.Authorize(context.Background(), tc.a)
		if err != nil || got != tc.want {
			t.Errorf("%s: Authorize = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

func TestAggregationCycle(t *testing.T) {
	a := aggregated("a", "b", "a")
	b := aggregated("b", "a", "b")
	b.Rules = []rbacv1.PolicyRule{rule(readVerbs, "", "pods")}
	p := NewPolicy([]*rbacv1.ClusterRole{a, b}, nil, nil, nil)
	if len(p.clusterRoles["a"]) != 1 || len(p.clusterRoles["b"]) != 1 {
		t.Errorf("aggregated rules a=%v b=%v, want b's one rule each", p.clusterRoles["a"], p.clusterRoles["b"])
	}
}

func TestForbiddenWording(t *testing.T) {
	u := &User{Name: "golden-nobody"}
	for _, tc := range []struct {
		a    Attributes
		want string
	}{
		{Attributes{User: u, Verb: "list", ResourceRequest: true, Resource: "configmaps", Namespace: "golden"},
			`configmaps is forbidden: User "golden-nobody" cannot list resource "configmaps" in API group "" in the namespace "golden"`},
		{Attributes{User: u, Verb: "get", ResourceRequest: true, Resource: "nodes", Name: "golden-node"},
			`nodes "golden-node" is forbidden: User "golden-nobody" cannot get resource "nodes" in API group "" at the cluster scope`},
		{Attributes{User: u, Verb: "get", ResourceRequest: true, APIGroup: "apps", Resource: "deployments", Subresource: "scale", Namespace: "n", Name: "d"},
			`deployments.apps "d" is forbidden: User "golden-nobody" cannot get resource "deployments/scale" in API group "apps" in the namespace "n"`},
		{Attributes{User: u, Verb: "get", Path: "/metrics"}, `forbidden: User "golden-nobody" cannot get path "/metrics"`},
	} {
		if got := Forbidden(tc.a).Error(); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}
