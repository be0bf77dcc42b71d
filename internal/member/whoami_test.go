package member_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// TestKubectlWhoami: `kubectl auth whoami` (SelfSubjectReview) through a
// follower prints the user, uid and groups of the admin, of a user of the
// static token file and of a ServiceAccount token; `kubectl auth can-i
// --list` (SelfSubjectRulesReview) answers for the same identity: the
// rules bound to a group whoami lists are there.
func TestKubectlWhoami(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("no kubectl on PATH")
	}
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(`alice-token,alice,u-alice,"devs,qa"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := membertest.StartCluster(t, 3, func(cfg *member.Config) { cfg.TokenAuthFile = tokens })
	f := c.Follower()
	ctx := t.Context()
	cs := c.Clientset(f)
	const ns = "whoami"
	must(t, create(ctx, cs.CoreV1().Namespaces(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	sa, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "bot"}}, metav1.CreateOptions{})
	must(t, err)
	// Bound to groups only: what can-i lists comes from the groups whoami shows.
	must(t, create(ctx, cs.RbacV1().Roles(ns), role(ns, "cm-reader", rrule([]string{"get", "list"}, "", "configmaps"))))
	must(t, create(ctx, cs.RbacV1().Roles(ns), role(ns, "lease-writer", rrule([]string{"create", "update"}, "coordination.k8s.io", "leases"))))
	for _, b := range []struct{ name, role, group string }{{"missing", "missing", "devs"}, {"qa", "cm-reader", "qa"},
		{"sas", "lease-writer", "system:serviceaccounts:" + ns}} {
		rb := binding(ns, b.name, "Role", b.role)
		rb.Subjects = []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacG, Name: b.group}}
		must(t, create(ctx, cs.RbacV1().RoleBindings(ns), rb))
	}
	// The follower answers with what it has applied: a consistent read of
	// the last write waits for it.
	if _, err := cs.RbacV1().RoleBindings(ns).Get(ctx, "sas", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	// A binding to a Role that does not exist: the rules review says so
	// (kube's evaluationError) and still lists what was found.
	cfg := c.RESTConfig(f)
	cfg.BearerToken = "alice-token"
	alice := kubernetes.NewForConfigOrDie(cfg)
	rr, err := alice.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{
		Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: ns}}, metav1.CreateOptions{})
	must(t, err)
	if want := `roles.rbac.authorization.k8s.io "missing" not found`; rr.Status.EvaluationError != want ||
		!slices.ContainsFunc(rr.Status.ResourceRules, func(r authorizationv1.ResourceRule) bool { return slices.Contains(r.Resources, "configmaps") }) {
		t.Errorf("alice's rules review: %+v, want configmaps and evaluationError %q", rr.Status, want)
	}
	kubectl := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", c.Kubeconfig(f), "--cache-dir", filepath.Join(dir, "cache")}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	tok := strings.TrimSpace(kubectl("-n", ns, "create", "token", "bot"))
	for _, tc := range []struct {
		name   string
		token  []string // kubectl flags: none for the admin kubeconfig's own credentials
		user   string
		uid    string
		groups []string
		canI   string // a line `kubectl auth can-i --list -n whoami` prints ("" none asked)
	}{
		{name: "admin", user: "litek8s-admin", groups: []string{"system:masters", "system:authenticated"}, canI: "*.*"},
		{name: "static token", token: []string{"--token", "alice-token"}, user: "alice", uid: "u-alice",
			groups: []string{"devs", "qa", "system:authenticated"}, canI: "configmaps "},
		{name: "ServiceAccount token", token: []string{"--token", tok}, user: "system:serviceaccount:whoami:bot", uid: string(sa.UID),
			groups: []string{"system:serviceaccounts", "system:serviceaccounts:whoami", "system:authenticated"}, canI: "leases.coordination.k8s.io "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r authenticationv1.SelfSubjectReview
			out := kubectl(append(tc.token, "auth", "whoami", "-o", "json")...)
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("whoami -o json: %v\n%s", err, out)
			}
			ui := r.Status.UserInfo
			if ui.Username != tc.user || ui.UID != tc.uid || !slices.Equal(ui.Groups, tc.groups) {
				t.Errorf("whoami: %+v, want user %q uid %q groups %q", ui, tc.user, tc.uid, tc.groups)
			}
			// A ServiceAccount token names its credential (kube: JTI=<the token's jti>).
			if cred := ui.Extra["authentication.kubernetes.io/credential-id"]; (tc.name == "ServiceAccount token") !=
				(len(cred) == 1 && strings.HasPrefix(cred[0], "JTI=")) {
				t.Errorf("whoami extra %v", ui.Extra)
			}
			table := kubectl(append(tc.token, "auth", "whoami")...)
			for _, want := range append([]string{"Username", tc.user}, tc.groups...) {
				if !strings.Contains(table, want) {
					t.Errorf("whoami prints\n%s\nwithout %q", table, want)
				}
			}
			list := kubectl(append(tc.token, "auth", "can-i", "--list", "-n", ns, "--no-headers")...)
			if !slices.ContainsFunc(strings.Split(list, "\n"), func(l string) bool { return strings.HasPrefix(l, tc.canI) }) {
				t.Errorf("can-i --list -n %s has no %q row:\n%s", ns, tc.canI, list)
			}
		})
	}
}
