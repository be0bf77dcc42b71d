package member_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// RBAC escalation prevention. Every expected answer below is written from
// kube's documented rules
// (https://kubernetes.io/docs/reference/access-authn-authz/rbac/#privilege-escalation-prevention-and-bootstrapping):
// a user may create or update a Role or ClusterRole only if she already
// holds every permission it contains (at the same scope: in the role's
// namespace, cluster-wide rules included, or cluster-wide for a
// ClusterRole) or holds the escalate verb on it; she may create or update
// a RoleBinding or ClusterRoleBinding only if she holds every permission
// of the referenced role (at the binding's scope) or the bind verb on it.
// resourceNames limit escalate and bind to the named roles (a create is
// a POST to the collection, which names nothing, so a named escalate
// does not allow a create). system:masters is never asked.

// escalationUsers is the static token file: token,user,uid,groups.
const escalationUsers = `limited-token,limited,u-limited,"devs"
binder-token,binder,u-binder,"devs"
escalator-token,escalator,u-escalator,"devs"
clu-token,clu,u-clu,"ops"
`

// rbacCase is one attempt: who writes what, and what kube answers.
type rbacCase struct {
	name  string
	user  string // a token of escalationUsers without "-token"
	write func(ctx context.Context, cs kubernetes.Interface, p pass) error
	// want: "" allowed, "403" forbidden (and the missing rule words
	// when msg is set), "404" the role is not found, "422" invalid.
	want string
	msg  string
}

// pass names the objects of one pass of the matrix (through the leader
// or a follower): each has its own namespaces and cluster-scoped names.
type pass struct{ ns, other, suffix string }

func (p pass) n(name string) string { return name + "-" + p.suffix }

func TestRBACEscalationPrevention(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(tokens, []byte(escalationUsers), 0o600); err != nil {
		t.Fatal(err)
	}
	c := membertest.StartCluster(t, 3, func(cfg *member.Config) { cfg.TokenAuthFile = tokens })
	ctx := t.Context()
	leader := c.WaitLeader()
	for _, at := range []struct {
		name   string
		member int
	}{{"leader", leader}, {"follower", c.Follower()}} {
		t.Run(at.name, func(t *testing.T) {
			p := pass{ns: "team-" + at.name, other: "other-" + at.name, suffix: at.name}
			admin := c.Clientset(at.member)
			setupEscalation(t, admin, p)
			escalations := 0
			for _, tc := range escalationMatrix() {
				cfg := c.RESTConfig(at.member)
				if tc.user != "admin" { // the admin: the cluster's admin token
					cfg.BearerToken = tc.user + "-token"
				}
				cfg.WrapTransport = membertest.RetryUnavailable
				cs := kubernetes.NewForConfigOrDie(cfg)
				err := tc.write(ctx, cs, p)
				if tc.want != "" && err == nil {
					escalations++
				}
				if msg := checkAnswer(err, tc.want, tc.msg); msg != "" {
					t.Errorf("%s (%s): %s", tc.name, tc.user, msg)
				}
			}
			if escalations != 0 {
				t.Errorf("%d escalations", escalations)
			}
			probeEscalation(t, c, at.member, p)
		})
	}
	t.Run("roleRef is immutable", func(t *testing.T) {
		cs := c.Clientset(c.Follower())
		rb, err := cs.RbacV1().RoleBindings("team-leader").Get(ctx, "limited-rbac", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rb.RoleRef.Name = "admin"
		_, err = cs.RbacV1().RoleBindings("team-leader").Update(ctx, rb, metav1.UpdateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "roleRef: Invalid value") {
			t.Errorf("changing roleRef: %v, want 422 roleRef: Invalid value", err)
		}
	})
}

// checkAnswer compares err with the expected answer; "" when they agree.
func checkAnswer(err error, want, msg string) string {
	switch want {
	case "":
		if err != nil {
			return fmt.Sprintf("refused (%v), want allowed", err)
		}
	case "403":
		if !apierrors.IsForbidden(err) {
			return fmt.Sprintf("answered %v, want 403", err)
		}
		if msg != "" && !strings.Contains(err.Error(), msg) {
			return fmt.Sprintf("403 %q does not say %q", err.Error(), msg)
		}
	case "404":
		if !apierrors.IsNotFound(err) {
			return fmt.Sprintf("answered %v, want 404", err)
		}
	case "422":
		if !apierrors.IsInvalid(err) {
			return fmt.Sprintf("answered %v, want 422", err)
		}
	}
	return ""
}

func rrule(verbs []string, group string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: []string{group}, Resources: resources}
}

func named(r rbacv1.PolicyRule, names ...string) rbacv1.PolicyRule {
	r.ResourceNames = names
	return r
}

var (
	rbacG     = rbacv1.GroupName
	roleVerbs = []string{"create", "get", "list", "update"}
	getPods   = rrule([]string{"get"}, "", "pods")
	getSecret = rrule([]string{"get"}, "", "secrets")
	all       = rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}
)

// setupEscalation creates, as the admin, the namespaces and what the
// users of escalationUsers hold:
//   - limited: roles and rolebindings (create/get/list/update) and get
//     pods in p.ns (the pod getter ClusterRole bound there); get
//     configmaps cluster-wide; create rolebindings only in p.other;
//   - binder: as limited in p.ns, plus bind on ClusterRole view and on Role
//     ghost (which does not exist) in p.ns;
//   - escalator: as limited in p.ns, plus escalate on Role "grow" in p.ns;
//   - clu: create/update/get on clusterroles and clusterrolebindings and
//     get pods, cluster-wide.
func setupEscalation(t *testing.T, cs kubernetes.Interface, p pass) {
	t.Helper()
	ctx := t.Context()
	for _, ns := range []string{p.ns, p.other} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	crs := []*rbacv1.ClusterRole{
		{ObjectMeta: metav1.ObjectMeta{Name: p.n("pod-getter")}, Rules: []rbacv1.PolicyRule{getPods}},
		{ObjectMeta: metav1.ObjectMeta{Name: p.n("cm-reader")}, Rules: []rbacv1.PolicyRule{rrule([]string{"get"}, "", "configmaps")}},
		{ObjectMeta: metav1.ObjectMeta{Name: p.n("clu")}, Rules: []rbacv1.PolicyRule{
			rrule([]string{"create", "get", "update"}, rbacG, "clusterroles", "clusterrolebindings"), getPods}},
	}
	roles := []*rbacv1.Role{
		{ObjectMeta: metav1.ObjectMeta{Name: "rbac-writer", Namespace: p.ns}, Rules: []rbacv1.PolicyRule{rrule(roleVerbs, rbacG, "roles", "rolebindings")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "binder", Namespace: p.ns}, Rules: []rbacv1.PolicyRule{
			named(rrule([]string{"bind"}, rbacG, "clusterroles"), "view"), named(rrule([]string{"bind"}, rbacG, "roles"), "ghost")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "escalator", Namespace: p.ns}, Rules: []rbacv1.PolicyRule{
			named(rrule([]string{"escalate"}, rbacG, "roles"), "grow")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "grow", Namespace: p.ns}, Rules: []rbacv1.PolicyRule{getPods}},
		{ObjectMeta: metav1.ObjectMeta{Name: "fixed", Namespace: p.ns}, Rules: []rbacv1.PolicyRule{getPods}},
		{ObjectMeta: metav1.ObjectMeta{Name: "rb-writer", Namespace: p.other}, Rules: []rbacv1.PolicyRule{rrule(roleVerbs, rbacG, "rolebindings")}},
	}
	users := func(names ...string) []rbacv1.Subject {
		var out []rbacv1.Subject
		for _, n := range names {
			out = append(out, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacG, Name: n})
		}
		return out
	}
	rbs := []*rbacv1.RoleBinding{
		{ObjectMeta: metav1.ObjectMeta{Name: "limited-rbac", Namespace: p.ns}, Subjects: users("limited", "binder", "escalator"),
			RoleRef: rbacv1.RoleRef{APIGroup: rbacG, Kind: "Role", Name: "rbac-writer"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "limited-pods", Namespace: p.ns}, Subjects: users("limited", "binder", "escalator"),
			RoleRef: rbacv1.RoleRef{APIGroup: rbacG, Kind: "ClusterRole", Name: p.n("pod-getter")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "binder", Namespace: p.ns}, Subjects: users("binder"),
			RoleRef: rbacv1.RoleRef{APIGroup: rbacG, Kind: "Role", Name: "binder"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "escalator", Namespace: p.ns}, Subjects: users("escalator"),
			RoleRef: rbacv1.RoleRef{APIGroup: rbacG, Kind: "Role", Name: "escalator"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "limited-other", Namespace: p.other}, Subjects: users("limited"),
			RoleRef: rbacv1.RoleRef{APIGroup: rbacG, Kind: "Role", Name: "rb-writer"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "admin-bound", Namespace: p.ns}, Subjects: users("someone"),
			RoleRef: rbacv1.RoleRef{APIGroup: rbacG, Kind: "ClusterRole", Name: "admin"}},
	}
	crbs := []*rbacv1.ClusterRoleBinding{
		{ObjectMeta: metav1.ObjectMeta{Name: p.n("limited-cm")}, Subjects: users("limited"),
			RoleRef: rbacv1.RoleRef{APIGroup: rbacG, Kind: "ClusterRole", Name: p.n("cm-reader")}},
		{ObjectMeta: metav1.ObjectMeta{Name: p.n("clu")}, Subjects: users("clu"),
			RoleRef: rbacv1.RoleRef{APIGroup: rbacG, Kind: "ClusterRole", Name: p.n("clu")}},
	}
	for _, o := range crs {
		must(t, create(ctx, cs.RbacV1().ClusterRoles(), o))
	}
	for _, o := range roles {
		must(t, create(ctx, cs.RbacV1().Roles(o.Namespace), o))
	}
	for _, o := range rbs {
		must(t, create(ctx, cs.RbacV1().RoleBindings(o.Namespace), o))
	}
	for _, o := range crbs {
		must(t, create(ctx, cs.RbacV1().ClusterRoleBindings(), o))
	}
	// A member authorizes with what it has applied: a consistent read (a
	// GET without resourceVersion waits for the read index) of the last
	// write makes this one hold it, and so, in log order, all of them.
	if _, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, crbs[len(crbs)-1].Name, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// create is Create of any typed client, without its answer.
func create[T any](ctx context.Context, c interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
}, o T) error {
	_, err := c.Create(ctx, o, metav1.CreateOptions{})
	return err
}

func role(ns, name string, rules ...rbacv1.PolicyRule) *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Rules: rules}
}

func binding(ns, name, kind, ref string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacG, Name: "someone"}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacG, Kind: kind, Name: ref}}
}

// updateRole replaces the rules of Role ns/name.
func updateRole(ctx context.Context, cs kubernetes.Interface, ns, name string, rules ...rbacv1.PolicyRule) error {
	r, err := cs.RbacV1().Roles(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	r.Rules = rules
	_, err = cs.RbacV1().Roles(ns).Update(ctx, r, metav1.UpdateOptions{})
	return err
}

// updateBinding changes RoleBinding ns/name with f.
func updateBinding(ctx context.Context, cs kubernetes.Interface, ns, name string, f func(*rbacv1.RoleBinding)) error {
	rb, err := cs.RbacV1().RoleBindings(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	f(rb)
	_, err = cs.RbacV1().RoleBindings(ns).Update(ctx, rb, metav1.UpdateOptions{})
	return err
}

func escalationMatrix() []rbacCase {
	const notHeld = "is attempting to grant RBAC permissions not currently held:\n"
	return []rbacCase{
		// Roles: what the writer holds in the namespace, cluster-wide rules included.
		{name: "create Role with a held rule", user: "limited", want: "",
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return create(ctx, cs.RbacV1().Roles(p.ns), role(p.ns, "pods", getPods))
			}},
		{name: "create Role with a rule held cluster-wide", user: "limited", want: "",
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return create(ctx, cs.RbacV1().Roles(p.ns), role(p.ns, "cms", rrule([]string{"get"}, "", "configmaps")))
			}},
		{name: "create Role with a rule not held", user: "limited", want: "403",
			msg: `user "limited" (groups=["devs" "system:authenticated"]) ` + notHeld + `{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`,
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return create(ctx, cs.RbacV1().Roles(p.ns), role(p.ns, "secrets", getSecret))
			}},
		{name: "create Role with * on *", user: "limited", want: "403",
			msg: notHeld + `{APIGroups:["*"], Resources:["*"], Verbs:["*"]}`,
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return create(ctx, cs.RbacV1().Roles(p.ns), role(p.ns, "star", all))
			}},
		{name: "update own Role beyond what is held", user: "limited", want: "403",
			msg: `{APIGroups:[""], Resources:["pods"], Verbs:["list" "delete"]}`, // Covers' order of the missing verbs, as kube lists them,
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return updateRole(ctx, cs, p.ns, "fixed", rrule([]string{"get", "list", "delete"}, "", "pods"))
			}},
		{name: "update Role named by escalate", user: "escalator", want: "",
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return updateRole(ctx, cs, p.ns, "grow", getPods, getSecret)
			}},
		{name: "update Role not named by escalate", user: "escalator", want: "403", msg: notHeld,
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return updateRole(ctx, cs, p.ns, "fixed", getPods, getSecret)
			}},
		{name: "create Role with escalate limited by resourceNames (a POST names nothing)", user: "escalator", want: "403", msg: notHeld,
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return create(ctx, cs.RbacV1().Roles(p.ns), role(p.ns, "grow2", getSecret))
			}},
		// RoleBindings: bind on the role, or every permission of it in the namespace.
		{name: "bind admin without holding it", user: "limited", want: "403",
			msg: `user "limited" (groups=["devs" "system:authenticated"]) ` + notHeld,
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return create(ctx, cs.RbacV1().RoleBindings(p.ns), binding(p.ns, "admin", "ClusterRole", "admin"))
			}},
		{name: "bind a Role whose rules are held", user: "limited", want: "",
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return create(ctx, cs.RbacV1().RoleBindings(p.ns), binding(p.ns, "fixed", "Role", "fixed"))
			}},
		{name: "bind a ClusterRole in a namespace where its rules are held", user: "limited", want: "",
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return create(ctx, cs.RbacV1().RoleBindings(p.ns), binding(p.ns, "pg", "ClusterRole", p.n("pod-getter")))
			}},
		{name: "bind the same ClusterRole in a namespace where its rules are not held", user: "limited", want: "403",
			msg: `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`,
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return create(ctx, cs.RbacV1().RoleBindings(p.other), binding(p.other, "pg", "ClusterRole", p.n("pod-getter")))
			}},
		{name: "bind a Role that does not exist without bind", user: "limited", want: "404",
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return create(ctx, cs.RbacV1().RoleBindings(p.ns), binding(p.ns, "ghost", "Role", "ghost"))
			}},
		{name: "bind view with bind on view", user: "binder", want: "",
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return create(ctx, cs.RbacV1().RoleBindings(p.ns), binding(p.ns, "view", "ClusterRole", "view"))
			}},
		{name: "bind edit with bind on view only", user: "binder", want: "403", msg: notHeld,
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return create(ctx, cs.RbacV1().RoleBindings(p.ns), binding(p.ns, "edit", "ClusterRole", "edit"))
			}},
		{name: "bind a Role that does not exist with bind on it", user: "binder", want: "",
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return create(ctx, cs.RbacV1().RoleBindings(p.ns), binding(p.ns, "ghost", "Role", "ghost"))
			}},
		{name: "change a binding to admin (update)", user: "binder", want: "403", msg: notHeld,
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				rb, err := cs.RbacV1().RoleBindings(p.ns).Get(ctx, "view", metav1.GetOptions{})
				if err != nil {
					return err
				}
				rb.Subjects = append(rb.Subjects, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacG, Name: "binder"})
				rb.RoleRef.Name = "admin"
				_, err = cs.RbacV1().RoleBindings(p.ns).Update(ctx, rb, metav1.UpdateOptions{})
				return err
			}},
		{name: "add a subject to a binding of a role held (update)", user: "binder", want: "",
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				rb, err := cs.RbacV1().RoleBindings(p.ns).Get(ctx, "view", metav1.GetOptions{})
				if err != nil {
					return err
				}
				rb.Subjects = append(rb.Subjects, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacG, Name: "another"})
				_, err = cs.RbacV1().RoleBindings(p.ns).Update(ctx, rb, metav1.UpdateOptions{})
				return err
			}},
		{name: "add a subject to a binding of admin (update)", user: "limited", want: "403", msg: notHeld,
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return updateBinding(ctx, cs, p.ns, "admin-bound", func(rb *rbacv1.RoleBinding) {
					rb.Subjects = append(rb.Subjects, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacG, Name: "limited"})
				})
			}},
		{name: "change only what the garbage collector changes on a binding of admin", user: "limited", want: "",
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return updateBinding(ctx, cs, p.ns, "admin-bound", func(rb *rbacv1.RoleBinding) {
					rb.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "u-owner"}}
				})
			}},
		{name: "bind a roleRef of an unknown kind", user: "limited", want: "422",
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return create(ctx, cs.RbacV1().RoleBindings(p.ns), binding(p.ns, "odd", "Group", "admin"))
			}},
		// ClusterRoles and ClusterRoleBindings: what the writer holds cluster-wide.
		{name: "create ClusterRole with a held rule", user: "clu", want: "",
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return create(ctx, cs.RbacV1().ClusterRoles(), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: p.n("clu-pods")},
					Rules: []rbacv1.PolicyRule{getPods}})
			}},
		{name: "create ClusterRole with a rule not held", user: "clu", want: "403",
			msg: `user "clu" (groups=["ops" "system:authenticated"]) ` + notHeld + `{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`,
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return create(ctx, cs.RbacV1().ClusterRoles(), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: p.n("clu-secrets")},
					Rules: []rbacv1.PolicyRule{getSecret}})
			}},
		{name: "create ClusterRole with an aggregationRule", user: "clu", want: "403",
			msg: "must have cluster-admin privileges to use the aggregationRule",
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return create(ctx, cs.RbacV1().ClusterRoles(), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: p.n("clu-agg")},
					AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"x": "y"}}}}})
			}},
		{name: "bind cluster-admin cluster-wide", user: "clu", want: "403",
			msg: notHeld + "{APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}\n{NonResourceURLs:[\"*\"], Verbs:[\"*\"]}",
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return create(ctx, cs.RbacV1().ClusterRoleBindings(), clusterBinding(p.n("clu-admin"), "cluster-admin"))
			}},
		{name: "bind a ClusterRole whose rules are held cluster-wide", user: "clu", want: "",
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return create(ctx, cs.RbacV1().ClusterRoleBindings(), clusterBinding(p.n("clu-pods"), p.n("pod-getter")))
			}},
		{name: "bind cluster-wide a ClusterRole held only in a namespace", user: "limited", want: "403",
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return create(ctx, cs.RbacV1().ClusterRoleBindings(), clusterBinding(p.n("limited-pods"), p.n("pod-getter")))
			}},
		// system:masters is never asked.
		{name: "admin creates a Role with * on *", user: "admin", want: "",
			write: func(ctx context.Context, cs kubernetes.Interface, p pass) error {
				return create(ctx, cs.RbacV1().Roles(p.ns), role(p.ns, "admin-star", all))
			}},
	}
}

func clusterBinding(name, ref string) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacG, Name: "someone"}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacG, Kind: "ClusterRole", Name: ref}}
}

// probeEscalation is issue 17's probe: a ServiceAccount that may only
// create, get and list roles and rolebindings in its namespace tries to
// bind itself admin and to create a Role with * on *, then to read
// Secrets. All three are refused, the first two with kube's words.
func probeEscalation(t *testing.T, c *membertest.Cluster, i int, p pass) {
	t.Helper()
	ctx := t.Context()
	admin := c.Clientset(i)
	must(t, create(ctx, admin.CoreV1().ServiceAccounts(p.ns), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}))
	must(t, create(ctx, admin.RbacV1().Roles(p.ns), role(p.ns, "probe", rrule([]string{"create", "get", "list"}, rbacG, "roles", "rolebindings"))))
	rb := binding(p.ns, "probe", "Role", "probe")
	rb.Subjects = []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "probe", Namespace: p.ns}}
	must(t, create(ctx, admin.RbacV1().RoleBindings(p.ns), rb))
	must(t, create(ctx, admin.CoreV1().Secrets(p.ns), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, StringData: map[string]string{"k": "v"}}))
	// The member authorizes with what it has applied: a consistent read of
	// the last write waits for it.
	if _, err := admin.CoreV1().Secrets(p.ns).Get(ctx, "s", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := admin.CoreV1().ServiceAccounts(p.ns).CreateToken(ctx, "probe", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	must(t, err)
	cfg := c.RESTConfig(i)
	cfg.BearerToken = tr.Status.Token
	cfg.WrapTransport = membertest.RetryUnavailable
	sa := kubernetes.NewForConfigOrDie(cfg)
	who := fmt.Sprintf(`user "system:serviceaccount:%s:probe" (groups=["system:serviceaccounts" "system:serviceaccounts:%s" "system:authenticated"]) `+
		"is attempting to grant RBAC permissions not currently held:\n", p.ns, p.ns)
	self := binding(p.ns, "probe-admin", "ClusterRole", "admin")
	self.Subjects = rb.Subjects
	err = create(ctx, sa.RbacV1().RoleBindings(p.ns), self)
	if msg := checkAnswer(err, "403", who); msg != "" {
		t.Errorf("probe binds admin: %s", msg)
	} else if line := "\n" + `{APIGroups:[""], Resources:["secrets"], Verbs:["create" "delete" "deletecollection" "patch" "update" "get" "list" "watch"]}`; !strings.Contains(err.Error(), line) {
		t.Errorf("probe binds admin: %q does not list %q", err.Error(), line)
	}
	err = create(ctx, sa.RbacV1().Roles(p.ns), role(p.ns, "probe-star", all))
	if msg := checkAnswer(err, "403", who+`{APIGroups:["*"], Resources:["*"], Verbs:["*"]}`); msg != "" {
		t.Errorf("probe creates * on *: %s", msg)
	}
	_, err = sa.CoreV1().Secrets(p.ns).List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("probe lists secrets: %v, want 403", err)
	}
	// Nothing the refusals were asked to store exists.
	if _, err := admin.RbacV1().RoleBindings(p.ns).Get(ctx, "probe-admin", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("refused binding probe-admin: %v, want NotFound", err)
	}
	l, err := admin.RbacV1().Roles(p.ns).List(ctx, metav1.ListOptions{})
	must(t, err)
	for _, r := range l.Items {
		if slices.Contains([]string{"probe-star", "secrets", "star", "grow2"}, r.Name) {
			t.Errorf("refused Role %s was stored", r.Name)
		}
	}
}
