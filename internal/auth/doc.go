// Package auth is who may do what: it authenticates a request (the admin
// token, a static token file, a client certificate of the cluster CA, a
// ServiceAccount token it signed, a bootstrap token, or nobody:
// system:anonymous) and authorizes it as kube's Node,RBAC chain (Chain):
// the Node authorizer decides the requests of nodes from a graph of what
// the pods bound to each node reference (NodeGraph), RBAC the rest,
// evaluated from the stored Roles, ClusterRoles, RoleBindings and
// ClusterRoleBindings. It also holds the default policy a new cluster
// starts with (cluster-admin, admin, edit, view, the system roles every
// authenticated user needs and kube's component roles).
//
// Concurrency: Policy and NodeGraph are immutable once built; the
// authenticators and authorizers hold no state of their own beyond their
// sources, which must be safe for concurrent use.
//
// The package knows nothing of HTTP routing or of the store's encoding:
// the API server builds Attributes from a parsed request and gives RBAC a
// Policy source that reads the stored objects.
package auth
