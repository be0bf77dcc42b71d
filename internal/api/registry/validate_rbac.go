package registry

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validation of the rbac.authorization.k8s.io/v1 bindings (see
// validate_core.go): a role reference in the RBAC group to a Role or
// ClusterRole (a ClusterRoleBinding: a ClusterRole), named, that never
// changes; subjects of a known kind, with a name.

func validateRoleBinding(obj, old runtime.Object) field.ErrorList {
	rb := obj.(*rbacv1.RoleBinding)
	var prev *rbacv1.RoleRef
	if o, ok := old.(*rbacv1.RoleBinding); ok {
		prev = &o.RoleRef
	}
	return validateRBACBinding(rb.RoleRef, prev, rb.Subjects, true)
}

func validateClusterRoleBinding(obj, old runtime.Object) field.ErrorList {
	crb := obj.(*rbacv1.ClusterRoleBinding)
	var prev *rbacv1.RoleRef
	if o, ok := old.(*rbacv1.ClusterRoleBinding); ok {
		prev = &o.RoleRef
	}
	return validateRBACBinding(crb.RoleRef, prev, crb.Subjects, false)
}

func validateRBACBinding(ref rbacv1.RoleRef, prev *rbacv1.RoleRef, subjects []rbacv1.Subject, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	refPath := field.NewPath("roleRef")
	if ref.APIGroup != rbacv1.GroupName {
		errs = append(errs, field.NotSupported(refPath.Child("apiGroup"), ref.APIGroup, []string{rbacv1.GroupName}))
	}
	kinds := []string{"ClusterRole"}
	if namespaced {
		kinds = []string{"Role", "ClusterRole"}
	}
	if !slices.Contains(kinds, ref.Kind) {
		errs = append(errs, field.NotSupported(refPath.Child("kind"), ref.Kind, kinds))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(refPath.Child("name"), ""))
	} else {
		for _, msg := range path.IsValidPathSegmentName(ref.Name) {
			errs = append(errs, field.Invalid(refPath.Child("name"), ref.Name, msg))
		}
	}
	for i, s := range subjects {
		p := field.NewPath("subjects").Index(i)
		if s.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
		switch s.Kind {
		case rbacv1.ServiceAccountKind:
			if s.APIGroup != "" {
				errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{""}))
			}
			if !namespaced && s.Namespace == "" {
				errs = append(errs, field.Required(p.Child("namespace"), ""))
			}
		case rbacv1.UserKind, rbacv1.GroupKind:
			if s.APIGroup != rbacv1.GroupName {
				errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{rbacv1.GroupName}))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("kind"), s.Kind,
				[]string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}))
		}
	}
	if prev != nil && *prev != ref {
		// kube renders the internal RoleRef, whose fields have no JSON names
		errs = append(errs, field.Invalid(refPath, struct{ APIGroup, Kind, Name string }(ref), "field is immutable"))
	}
	return errs
}
