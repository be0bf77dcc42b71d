package registry

import (
	rbacv1 "k8s.io/api/rbac/v1"
)

// rbacKinds are the served kinds of rbac.authorization.k8s.io/v1. They are
// stored, not enforced: every authenticated user is an admin (issue 3).
func rbacKinds() []*Resource {
	const g = "rbac.authorization.k8s.io"
	return []*Resource{
		{Group: g, Version: "v1", Resource: "roles", Singular: "role", Kind: "Role", Namespaced: true,
			New: NewOf[rbacv1.Role](), NewList: NewOf[rbacv1.RoleList]()},
		{Group: g, Version: "v1", Resource: "rolebindings", Singular: "rolebinding", Kind: "RoleBinding",
			Namespaced: true, New: NewOf[rbacv1.RoleBinding](), NewList: NewOf[rbacv1.RoleBindingList](),
			Normalize: defaultRoleBinding, Validate: validateRoleBinding},
		{Group: g, Version: "v1", Resource: "clusterroles", Singular: "clusterrole", Kind: "ClusterRole",
			New: NewOf[rbacv1.ClusterRole](), NewList: NewOf[rbacv1.ClusterRoleList]()},
		{Group: g, Version: "v1", Resource: "clusterrolebindings", Singular: "clusterrolebinding",
			Kind: "ClusterRoleBinding", New: NewOf[rbacv1.ClusterRoleBinding](),
			NewList: NewOf[rbacv1.ClusterRoleBindingList](), Normalize: defaultClusterRoleBinding,
			Validate: validateClusterRoleBinding},
	}
}
