package auth

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultRoles are the namespaced Roles of kube's default policy that
// litek8s has: extension-apiserver-authentication-reader in kube-system,
// which aggregated API servers (metrics-server's chart binds it) need to
// read the configmap kube-system/extension-apiserver-authentication.
func DefaultRoles() []*rbacv1.Role {
	r := &rbacv1.Role{ObjectMeta: meta("extension-apiserver-authentication-reader", nil),
		Rules: []rbacv1.PolicyRule{{Verbs: readVerbs, APIGroups: []string{""}, Resources: []string{"configmaps"},
			ResourceNames: []string{"extension-apiserver-authentication"}}}}
	r.Namespace = metav1.NamespaceSystem
	return []*rbacv1.Role{r}
}

// DefaultRoleBindings are kube's namespaced default bindings of
// DefaultRoles: system::extension-apiserver-authentication-reader for the
// controller manager and the scheduler.
func DefaultRoleBindings() []*rbacv1.RoleBinding {
	b := &rbacv1.RoleBinding{ObjectMeta: meta("system::extension-apiserver-authentication-reader", nil),
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "extension-apiserver-authentication-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "system:kube-controller-manager"},
			{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "system:kube-scheduler"}}}
	b.Namespace = metav1.NamespaceSystem
	return []*rbacv1.RoleBinding{b}
}
