// Package auth is who may do what: it authenticates a request (the admin
// token, a static token file, a client certificate of the cluster CA, a
// ServiceAccount token it signed, or nobody: system:anonymous) and
// authorizes it with RBAC, evaluated from the stored Roles, ClusterRoles,
// RoleBindings and ClusterRoleBindings. It also holds the default policy a
// new cluster starts with (cluster-admin, admin, edit, view and the
// system roles every authenticated user needs).
//
// The package knows nothing of HTTP routing or of the store's encoding:
// the API server builds Attributes from a parsed request and gives RBAC a
// Policy source that reads the stored objects.
package auth
