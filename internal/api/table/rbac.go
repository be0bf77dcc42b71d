package table

import (
	"strings"

	"github.com/tidwall/gjson"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
)

// Roles and ClusterRoles have no printer of their own in kube: they get the
// default one (Name, Created At). The bindings' Role column describes
// roleRef with the v1beta1 text, as kube's printers do.

var roleBindingColumns = []Column{
	nameColumn,
	{Name: "Role", Type: "string", Description: rbacv1beta1.RoleBinding{}.SwaggerDoc()["roleRef"]},
	ageColumn,
	{Name: "Users", Type: "string", Priority: 1, Description: "Users in the roleBinding"},
	{Name: "Groups", Type: "string", Priority: 1, Description: "Groups in the roleBinding"},
	{Name: "ServiceAccounts", Type: "string", Priority: 1, Description: "ServiceAccounts in the roleBinding"},
}

var clusterRoleBindingColumns = []Column{
	nameColumn,
	{Name: "Role", Type: "string", Description: rbacv1beta1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"]},
	ageColumn,
	{Name: "Users", Type: "string", Priority: 1, Description: "Users in the clusterRoleBinding"},
	{Name: "Groups", Type: "string", Priority: 1, Description: "Groups in the clusterRoleBinding"},
	{Name: "ServiceAccounts", Type: "string", Priority: 1, Description: "ServiceAccounts in the clusterRoleBinding"},
}

// roleBindingCells follows kube's printRoleBinding and
// printClusterRoleBinding with Wide set: "Kind/name", then the users,
// groups and "namespace/name" service accounts, each joined with ", ".
func roleBindingCells(o *object, w *rowWriter) {
	ref := o.get("roleRef")
	w.str(o.name)
	w.str(ref.Get("kind").String() + "/" + ref.Get("name").String())
	var users, groups, sas []string
	forEachElem(o.get("subjects"), func(s gjson.Result) bool {
		name := s.Get("name").String()
		switch s.Get("kind").String() {
		case "ServiceAccount":
			sas = append(sas, s.Get("namespace").String()+"/"+name)
		case "User":
			users = append(users, name)
		case "Group":
			groups = append(groups, name)
		}
		return true
	})
	w.age(o.created)
	w.str(strings.Join(users, ", "))
	w.str(strings.Join(groups, ", "))
	w.str(strings.Join(sas, ", "))
}
