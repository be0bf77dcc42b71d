package auth

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkAuthorize is RBAC on a request's path: a ServiceAccount bound
// to view in its namespace, among 100 namespaces with two bindings each,
// asking for a list it is granted and one it is not.
func BenchmarkAuthorize(b *testing.B) {
	var rbs []*rbacv1.RoleBinding
	for i := range 100 {
		ns := fmt.Sprintf("ns-%d", i)
		rbs = append(rbs,
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "view", Namespace: ns},
				RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"}, Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "bot"}}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "edit", Namespace: ns},
				RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "edit"}, Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: "devs"}}})
	}
	p := NewPolicy(DefaultClusterRoles(), nil, DefaultClusterRoleBindings(), rbs)
	z := &RBAC{Policy: func(context.Context) (*Policy, error) { return p, nil }}
	bot := serviceAccountUser("ns-42", "bot", "u")
	for _, tc := range []struct {
		name string
		a    Attributes
		want bool
	}{
		{"allowed", Attributes{User: bot, Verb: "list", ResourceRequest: true, APIGroup: "apps", Resource: "deployments", Namespace: "ns-42"}, true},
		{"denied", Attributes{User: bot, Verb: "create", ResourceRequest: true, Resource: "secrets", Namespace: "ns-42"}, false},
		{"masters", Attributes{User: adminUser, Verb: "create", ResourceRequest: true, Resource: "secrets", Namespace: "ns-42"}, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if ok, _ := z.Authorize(context.Background(), tc.a); ok != tc.want {
					b.Fatalf("Authorize = %v", ok)
				}
			}
		})
	}
}

// BenchmarkAuthenticateAdminToken is every admin request's authentication
// (against the token's hash).
func BenchmarkAuthenticateAdminToken(b *testing.B) {
	a := &Authenticator{AdminTokenHash: HashToken("0123456789abcdef0123456789abcdef0123456789abcdef"), Anonymous: true}
	r := httptest.NewRequest("GET", "/api/v1/pods", nil)
	r.Header.Set("Authorization", "Bearer 0123456789abcdef0123456789abcdef0123456789abcdef")
	b.ReportAllocs()
	for b.Loop() {
		if u, err := a.Authenticate(context.Background(), r); err != nil || u != adminUser {
			b.Fatal(u, err)
		}
	}
}

// BenchmarkAuthenticateLoopbackToken is every controller request's
// authentication.
func BenchmarkAuthenticateLoopbackToken(b *testing.B) {
	a := &Authenticator{LoopbackToken: "0123456789abcdef0123456789abcdef0123456789abcdef", Anonymous: true}
	r := httptest.NewRequest("GET", "/api/v1/pods", nil)
	r.Header.Set("Authorization", "Bearer 0123456789abcdef0123456789abcdef0123456789abcdef")
	b.ReportAllocs()
	for b.Loop() {
		if u, err := a.Authenticate(context.Background(), r); err != nil || u != loopbackUser {
			b.Fatal(u, err)
		}
	}
}
