package auth

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The default policy a new cluster starts with, as kube-apiserver's RBAC
// bootstrap creates it: the user-facing roles cluster-admin, admin, edit
// and view (the last three aggregated from the system:aggregate-to-* roles
// and any role labelled like them), and the system roles every user needs
// for discovery, health and asking what they may do.

const (
	aggregateLabel = "rbac.authorization.k8s.io/aggregate-to-"
	bootstrapLabel = "kubernetes.io/bootstrapping"
	autoupdate     = "rbac.authorization.kubernetes.io/autoupdate"
)

var (
	readVerbs  = []string{"get", "list", "watch"}
	writeVerbs = []string{"create", "delete", "deletecollection", "patch", "update"}
	allVerbs   = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
)

func meta(name string, labels map[string]string) metav1.ObjectMeta {
	l := map[string]string{bootstrapLabel: "rbac-defaults"}
	for k, v := range labels {
		l[k] = v
	}
	return metav1.ObjectMeta{Name: name, Labels: l, Annotations: map[string]string{autoupdate: "true"}}
}

func rule(verbs []string, group string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: []string{group}, Resources: resources}
}

func urls(verbs []string, paths ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, NonResourceURLs: paths}
}

func aggregated(name, to string, selects string) *rbacv1.ClusterRole {
	labels := map[string]string{}
	if to != "" {
		labels[aggregateLabel+to] = "true"
	}
	return &rbacv1.ClusterRole{ObjectMeta: meta(name, labels), AggregationRule: &rbacv1.AggregationRule{
		ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{aggregateLabel + selects: "true"}}}}}
}

// DefaultClusterRoles are the ClusterRoles of a new cluster.
func DefaultClusterRoles() []*rbacv1.ClusterRole {
	get := []string{"get"}
	create := []string{"create"}
	viewed := []rbacv1.PolicyRule{
		rule(readVerbs, "", "configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "pods",
			"replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services", "services/status"),
		rule(readVerbs, "", "bindings", "events", "limitranges", "namespaces/status", "pods/log", "pods/status",
			"replicationcontrollers/status", "resourcequotas", "resourcequotas/status"),
		rule(readVerbs, "", "namespaces"),
		rule(readVerbs, "discovery.k8s.io", "endpointslices"),
		rule(readVerbs, "apps", "controllerrevisions", "daemonsets", "daemonsets/status", "deployments", "deployments/scale",
			"deployments/status", "replicasets", "replicasets/scale", "replicasets/status", "statefulsets",
			"statefulsets/scale", "statefulsets/status"),
		rule(readVerbs, "autoscaling", "horizontalpodautoscalers", "horizontalpodautoscalers/status"),
		rule(readVerbs, "batch", "cronjobs", "cronjobs/status", "jobs", "jobs/status"),
		rule(readVerbs, "policy", "poddisruptionbudgets", "poddisruptionbudgets/status"),
		rule(readVerbs, "networking.k8s.io", "ingresses", "ingresses/status", "networkpolicies"),
	}
	edited := []rbacv1.PolicyRule{
		rule([]string{"impersonate"}, "", "serviceaccounts"),
		rule(writeVerbs, "", "pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"),
		rule(create, "", "pods/eviction"),
		rule(writeVerbs, "", "configmaps", "events", "persistentvolumeclaims", "replicationcontrollers",
			"replicationcontrollers/scale", "secrets", "serviceaccounts", "services", "services/proxy"),
		rule(create, "", "serviceaccounts/token"),
		rule(readVerbs, "", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy"),
		rule(writeVerbs, "discovery.k8s.io", "endpointslices"),
		rule(writeVerbs, "apps", "daemonsets", "deployments", "deployments/rollback", "deployments/scale", "replicasets",
			"replicasets/scale", "statefulsets", "statefulsets/scale"),
		rule(writeVerbs, "autoscaling", "horizontalpodautoscalers"),
		rule(writeVerbs, "batch", "cronjobs", "jobs"),
		rule(writeVerbs, "policy", "poddisruptionbudgets"),
		rule(writeVerbs, "networking.k8s.io", "ingresses", "networkpolicies"),
		rule(writeVerbs, "coordination.k8s.io", "leases"),
		rule(readVerbs, "coordination.k8s.io", "leases"),
	}
	admined := []rbacv1.PolicyRule{
		rule(create, "authorization.k8s.io", "localsubjectaccessreviews"),
		rule(allVerbs, "rbac.authorization.k8s.io", "rolebindings", "roles"),
	}
	all := []string{"*"}
	return append([]*rbacv1.ClusterRole{
		{ObjectMeta: meta("cluster-admin", nil), Rules: []rbacv1.PolicyRule{
			{Verbs: all, APIGroups: all, Resources: all}, {Verbs: all, NonResourceURLs: all}}},
		aggregated("admin", "", "admin"),
		aggregated("edit", "admin", "edit"),
		aggregated("view", "edit", "view"),
		{ObjectMeta: meta("system:aggregate-to-admin", map[string]string{aggregateLabel + "admin": "true"}), Rules: admined},
		{ObjectMeta: meta("system:aggregate-to-edit", map[string]string{aggregateLabel + "edit": "true"}), Rules: edited},
		{ObjectMeta: meta("system:aggregate-to-view", map[string]string{aggregateLabel + "view": "true"}), Rules: viewed},
		{ObjectMeta: meta("system:discovery", nil), Rules: []rbacv1.PolicyRule{urls(get, "/api", "/api/*", "/apis", "/apis/*",
			"/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/")}},
		{ObjectMeta: meta("system:public-info-viewer", nil), Rules: []rbacv1.PolicyRule{urls(get,
			"/healthz", "/livez", "/readyz", "/version", "/version/")}},
		{ObjectMeta: meta("system:basic-user", nil), Rules: []rbacv1.PolicyRule{
			rule(create, "authorization.k8s.io", "selfsubjectaccessreviews", "selfsubjectrulesreviews"),
			rule(create, "authentication.k8s.io", "selfsubjectreviews")}},
	}, systemClusterRoles()...)
}

// DefaultClusterRoleBindings bind the default roles: cluster-admin to
// system:masters, the system roles to every (or any) user.
func DefaultClusterRoleBindings() []*rbacv1.ClusterRoleBinding {
	bind := func(role string, groups ...string) *rbacv1.ClusterRoleBinding {
		b := &rbacv1.ClusterRoleBinding{ObjectMeta: meta(role, nil),
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}}
		for _, g := range groups {
			b.Subjects = append(b.Subjects, rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: g})
		}
		return b
	}
	return append([]*rbacv1.ClusterRoleBinding{
		bind("cluster-admin", GroupMasters),
		bind("system:discovery", GroupAuthenticated),
		bind("system:basic-user", GroupAuthenticated),
		bind("system:public-info-viewer", GroupAuthenticated, GroupUnauthenticated),
	}, systemClusterRoleBindings(bind)...)
}
