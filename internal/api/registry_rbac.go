package api

import (
	rbacv1 "k8s.io/api/rbac/v1"
)

// rbacKinds are the served kinds of rbac.authorization.k8s.io/v1. They are
// stored, not enforced: every authenticated user is an admin (issue 3).
func rbacKinds() []*resource {
	const g = "rbac.authorization.k8s.io"
	return []*resource{
		{Group: g, Version: "v1", Resource: "roles", Singular: "role", Kind: "Role", Namespaced: true,
			New: newOf[rbacv1.Role](), NewList: newOf[rbacv1.RoleList]()},
		{Group: g, Version: "v1", Resource: "rolebindings", Singular: "rolebinding", Kind: "RoleBinding",
			Namespaced: true, New: newOf[rbacv1.RoleBinding](), NewList: newOf[rbacv1.RoleBindingList](),
			Normalize: defaultRoleBinding, Validate: validateRoleBinding},
		{Group: g, Version: "v1", Resource: "clusterroles", Singular: "clusterrole", Kind: "ClusterRole",
			New: newOf[rbacv1.ClusterRole](), NewList: newOf[rbacv1.ClusterRoleList]()},
		{Group: g, Version: "v1", Resource: "clusterrolebindings", Singular: "clusterrolebinding",
			Kind: "ClusterRoleBinding", New: newOf[rbacv1.ClusterRoleBinding](),
			NewList: newOf[rbacv1.ClusterRoleBindingList](), Normalize: defaultClusterRoleBinding,
			Validate: validateClusterRoleBinding},
	}
}
