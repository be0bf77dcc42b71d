package auth

import (
	rbacv1 "k8s.io/api/rbac/v1"
)

// The system roles kube-apiserver's RBAC bootstrap policy creates for the
// cluster's own components: nodes and their TLS bootstrap, kube-proxy,
// kube-dns, the controller manager and scheduler, delegated authentication
// and authorization, and the approvers of each certificate signer.

// Well-known node users and groups (kube's names).
const (
	// NodeUserPrefix starts a node's user name: system:node:<node>.
	NodeUserPrefix = "system:node:"
	// GroupNodes is the group of every node.
	GroupNodes = "system:nodes"
	// GroupBootstrappers is the group of every bootstrap token.
	GroupBootstrappers = "system:bootstrappers"
	// BootstrapUserPrefix starts a bootstrap token's user name:
	// system:bootstrap:<token-id>.
	BootstrapUserPrefix = "system:bootstrap:"
)

// The certificate signers kube-controller-manager signs for.
const (
	SignerKubeAPIServerClient        = "kubernetes.io/kube-apiserver-client"
	SignerKubeAPIServerClientKubelet = "kubernetes.io/kube-apiserver-client-kubelet"
	SignerKubeletServing             = "kubernetes.io/kubelet-serving"
	SignerLegacyUnknown              = "kubernetes.io/legacy-unknown"
)

// NodeRules are the rules of the system:node role, which the Node
// authorizer applies to every node for the resources it does not
// subdivide itself (kube's bootstrappolicy.NodeRules with the feature
// gates kube 1.37 enables by default).
func NodeRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		rule([]string{"create"}, "authentication.k8s.io", "tokenreviews"),
		rule([]string{"create"}, "authorization.k8s.io", "subjectaccessreviews", "localsubjectaccessreviews"),
		rule(readVerbs, "", "services"),
		rule([]string{"create", "get", "list", "watch"}, "", "nodes"),
		rule([]string{"update", "patch"}, "", "nodes/status"),
		rule([]string{"update", "patch"}, "", "nodes"),
		{Verbs: []string{"create", "update", "patch"}, APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}},
		rule(readVerbs, "", "pods"),
		rule([]string{"create", "delete"}, "", "pods"),
		rule([]string{"update", "patch"}, "", "pods/status"),
		rule([]string{"create"}, "", "pods/eviction"),
		rule(readVerbs, "", "secrets", "configmaps"),
		rule([]string{"get"}, "", "persistentvolumeclaims", "persistentvolumes"),
		rule([]string{"get"}, "", "endpoints"),
		rule([]string{"create", "get", "list", "watch"}, "certificates.k8s.io", "certificatesigningrequests"),
		rule([]string{"get", "create", "update", "patch", "delete"}, "coordination.k8s.io", "leases"),
		rule([]string{"get"}, "storage.k8s.io", "volumeattachments"),
		rule([]string{"create"}, "", "serviceaccounts/token"),
		rule([]string{"get", "update", "patch"}, "", "persistentvolumeclaims/status"),
		rule([]string{"get", "watch", "list"}, "storage.k8s.io", "csidrivers"),
		rule([]string{"get", "create", "update", "patch", "delete"}, "storage.k8s.io", "csinodes"),
		rule(readVerbs, "node.k8s.io", "runtimeclasses"),
		rule([]string{"get"}, "resource.k8s.io", "resourceclaims"),
		rule([]string{"deletecollection"}, "resource.k8s.io", "resourceslices"),
		rule(readVerbs, "certificates.k8s.io", "clustertrustbundles"),
		rule([]string{"get"}, "", "serviceaccounts"),
		rule([]string{"get", "list", "watch", "create"}, "certificates.k8s.io", "podcertificaterequests"),
	}
}

// systemClusterRoles are the component roles of DefaultClusterRoles.
func systemClusterRoles() []*rbacv1.ClusterRole {
	create := []string{"create"}
	events := rbacv1.PolicyRule{Verbs: []string{"create", "update", "patch"}, APIGroups: []string{"", "events.k8s.io"},
		Resources: []string{"events"}}
	reviews := []rbacv1.PolicyRule{rule(create, "authentication.k8s.io", "tokenreviews"),
		rule(create, "authorization.k8s.io", "subjectaccessreviews")}
	approver := func(signer string) []rbacv1.PolicyRule {
		r := rule([]string{"approve"}, "certificates.k8s.io", "signers")
		r.ResourceNames = []string{signer}
		return []rbacv1.PolicyRule{r}
	}
	named := func(verbs []string, group, resource string, names ...string) rbacv1.PolicyRule {
		r := rule(verbs, group, resource)
		r.ResourceNames = names
		return r
	}
	readUpdate := []string{"get", "list", "watch", "update", "patch"}
	role := func(name string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{ObjectMeta: meta(name, nil), Rules: rules}
	}
	return []*rbacv1.ClusterRole{
		role("system:monitoring", urls([]string{"get"}, "/metrics", "/metrics/slis", "/livez", "/readyz", "/healthz",
			"/livez/*", "/readyz/*", "/healthz/*")),
		role("system:heapster", rule(readVerbs, "", "events", "pods", "nodes", "namespaces"),
			rule(readVerbs, "extensions", "deployments")),
		role("system:node", NodeRules()...),
		role("system:node-problem-detector", rule([]string{"get"}, "", "nodes"), rule([]string{"patch"}, "", "nodes/status"), events),
		role("system:node-bootstrapper", rule([]string{"create", "get", "list", "watch"}, "certificates.k8s.io", "certificatesigningrequests")),
		role("system:auth-delegator", reviews...),
		role("system:kube-aggregator", rule(readVerbs, "", "services", "endpoints")),
		role("system:kube-controller-manager", events,
			rule(create, "coordination.k8s.io", "leases"),
			named([]string{"get", "update"}, "coordination.k8s.io", "leases", "kube-controller-manager"),
			rule(create, "", "secrets", "serviceaccounts"),
			rule([]string{"delete"}, "", "secrets"),
			rule([]string{"get"}, "", "namespaces", "secrets", "serviceaccounts", "configmaps"),
			rule([]string{"update"}, "", "secrets", "serviceaccounts"),
			reviews[0], reviews[1],
			rule([]string{"list", "watch"}, "*", "*"),
			rule(create, "", "serviceaccounts/token")),
		role("system:kube-dns", rule([]string{"list", "watch"}, "", "endpoints", "services")),
		role("system:persistent-volume-provisioner",
			rule([]string{"get", "list", "watch", "create", "delete"}, "", "persistentvolumes"),
			rule([]string{"get", "list", "watch", "update"}, "", "persistentvolumeclaims"),
			rule(readVerbs, "storage.k8s.io", "storageclasses"),
			rule([]string{"watch"}, "", "events"), events),
		role("system:certificates.k8s.io:certificatesigningrequests:nodeclient",
			rule(create, "certificates.k8s.io", "certificatesigningrequests/nodeclient")),
		role("system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
			rule(create, "certificates.k8s.io", "certificatesigningrequests/selfnodeclient")),
		role("system:volume-scheduler", rule(readUpdate, "", "persistentvolumes"),
			rule(readVerbs, "storage.k8s.io", "storageclasses"), rule(readUpdate, "", "persistentvolumeclaims")),
		role("system:certificates.k8s.io:legacy-unknown-approver", approver(SignerLegacyUnknown)...),
		role("system:certificates.k8s.io:kubelet-serving-approver", approver(SignerKubeletServing)...),
		role("system:certificates.k8s.io:kube-apiserver-client-approver", approver(SignerKubeAPIServerClient)...),
		role("system:certificates.k8s.io:kube-apiserver-client-kubelet-approver", approver(SignerKubeAPIServerClientKubelet)...),
		role("system:service-account-issuer-discovery", urls([]string{"get"}, "/.well-known/openid-configuration",
			"/.well-known/openid-configuration/", "/openid/v1/jwks", "/openid/v1/jwks/")),
		role("system:kubelet-api-admin", rule(readVerbs, "", "nodes"), rule([]string{"proxy"}, "", "nodes"),
			rule([]string{"*"}, "", "nodes/proxy", "nodes/metrics", "nodes/stats", "nodes/log", "nodes/pods",
				"nodes/healthz", "nodes/configz")),
		role("system:node-proxier", rule([]string{"list", "watch"}, "", "services", "endpoints"),
			rule(readVerbs, "", "nodes"), events, rule([]string{"list", "watch"}, "networking.k8s.io", "servicecidrs"),
			rule([]string{"list", "watch"}, "discovery.k8s.io", "endpointslices")),
		role("system:kube-scheduler", events,
			rule(create, "coordination.k8s.io", "leases"),
			named([]string{"get", "update", "list", "watch"}, "coordination.k8s.io", "leases", "kube-scheduler"),
			rule(allVerbs, "coordination.k8s.io", "leasecandidates"),
			rule(readVerbs, "", "nodes"),
			rule([]string{"get", "list", "watch", "delete"}, "", "pods"),
			rule(create, "", "pods/binding", "bindings"),
			rule([]string{"patch", "update"}, "", "pods/status"),
			rule(readVerbs, "", "services", "replicationcontrollers"),
			rule(readVerbs, "apps", "replicasets"), rule(readVerbs, "extensions", "replicasets"),
			rule(readVerbs, "apps", "statefulsets"),
			rule(readVerbs, "policy", "poddisruptionbudgets"),
			rule(readVerbs, "", "persistentvolumeclaims", "persistentvolumes"),
			reviews[0], reviews[1],
			rule(readVerbs, "storage.k8s.io", "csinodes", "volumeattachments", "csidrivers", "csistoragecapacities"),
			rule(readVerbs, "", "namespaces"),
			rule(readVerbs, "resource.k8s.io", "deviceclasses", "resourceslices"),
			rule(readUpdate, "resource.k8s.io", "resourceclaims", "resourceclaims/status"),
			rule([]string{"update"}, "", "pods/finalizers")),
		role("system:cluster-trust-bundle-discovery", rule(readVerbs, "certificates.k8s.io", "clustertrustbundles")),
	}
}

// systemClusterRoleBindings are the component bindings of
// DefaultClusterRoleBindings. system:node is bound to nobody, as in kube:
// the Node authorizer grants nodes their rights.
func systemClusterRoleBindings(bind func(role string, groups ...string) *rbacv1.ClusterRoleBinding) []*rbacv1.ClusterRoleBinding {
	user := func(role, name string) *rbacv1.ClusterRoleBinding {
		b := bind(role)
		b.Subjects = []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}}
		return b
	}
	dns := bind("system:kube-dns")
	dns.Subjects = []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "kube-system", Name: "kube-dns"}}
	return []*rbacv1.ClusterRoleBinding{
		bind("system:monitoring", "system:monitoring"),
		user("system:node-proxier", "system:kube-proxy"),
		user("system:kube-controller-manager", "system:kube-controller-manager"),
		dns,
		user("system:kube-scheduler", "system:kube-scheduler"),
		user("system:volume-scheduler", "system:kube-scheduler"),
		bind("system:node"),
		bind("system:service-account-issuer-discovery", GroupServiceAccounts),
		bind("system:cluster-trust-bundle-discovery", GroupServiceAccounts),
	}
}
