package auth

import (
	"context"
	"slices"
)

// Well-known users and groups (kube's names).
const (
	Anonymous            = "system:anonymous"
	GroupMasters         = "system:masters" // the superuser group: RBAC is not asked
	GroupAuthenticated   = "system:authenticated"
	GroupUnauthenticated = "system:unauthenticated"
	GroupServiceAccounts = "system:serviceaccounts"
	// AdminUser is who holds the admin token (kube's kubeadm calls its
	// admin "kubernetes-admin").
	AdminUser = "litek8s-admin"
	// LoopbackUser is who the member's own clients (its controllers) are,
	// as kube-apiserver's loopback client.
	LoopbackUser = "system:apiserver"
	// serviceAccountPrefix starts every ServiceAccount's user name:
	// system:serviceaccount:<namespace>:<name>.
	serviceAccountPrefix = "system:serviceaccount:"
)

// User is who made a request.
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

// InGroup reports whether the user is in group g.
func (u *User) InGroup(g string) bool { return slices.Contains(u.Groups, g) }

// ServiceAccountUser is the user name of ServiceAccount ns/name.
func ServiceAccountUser(ns, name string) string { return serviceAccountPrefix + ns + ":" + name }

// serviceAccountUser builds the user a ServiceAccount token stands for.
func serviceAccountUser(ns, name, uid string) *User {
	return &User{Name: ServiceAccountUser(ns, name), UID: uid,
		Groups: []string{GroupServiceAccounts, GroupServiceAccounts + ":" + ns, GroupAuthenticated}}
}

type userKey struct{}

// WithUser returns ctx carrying u.
func WithUser(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the user ctx carries (nil: none).
func UserFrom(ctx context.Context) *User {
	u, _ := ctx.Value(userKey{}).(*User)
	return u
}
