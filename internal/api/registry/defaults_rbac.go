package registry

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// defaultRoleBinding: roleRef and User/Group subjects are in the RBAC
// group unless they say otherwise.
func defaultRoleBinding(obj runtime.Object) {
	rb := obj.(*rbacv1.RoleBinding)
	defaultBinding(&rb.RoleRef, rb.Subjects)
}

func defaultClusterRoleBinding(obj runtime.Object) {
	crb := obj.(*rbacv1.ClusterRoleBinding)
	defaultBinding(&crb.RoleRef, crb.Subjects)
}

func defaultBinding(ref *rbacv1.RoleRef, subjects []rbacv1.Subject) {
	defaultString(&ref.APIGroup, rbacv1.GroupName)
	for i := range subjects {
		if s := &subjects[i]; s.APIGroup == "" && (s.Kind == rbacv1.UserKind || s.Kind == rbacv1.GroupKind) {
			s.APIGroup = rbacv1.GroupName
		}
	}
}
