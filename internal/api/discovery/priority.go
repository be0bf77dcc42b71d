package discovery

// groupPriority returns the GroupPriorityMinimum kube-apiserver 1.37 gives
// the APIService of a built-in group (kube-aggregator's default priorities
// merged with kube-apiserver's own). Discovery lists groups by this priority,
// highest first, then by name; it is what makes /apis start with apps. Any
// other group gets 1000, the priority of CRD groups, so it sorts after the
// built-in ones, by name.
func groupPriority(group string) int {
	switch group {
	case "apiregistration.k8s.io":
		return 18000
	case "apps":
		return 17800
	case "events.k8s.io":
		return 17750
	case "authentication.k8s.io":
		return 17700
	case "authorization.k8s.io":
		return 17600
	case "autoscaling":
		return 17500
	case "batch":
		return 17400
	case "certificates.k8s.io":
		return 17300
	case "networking.k8s.io":
		return 17200
	case "policy":
		return 17100
	case "rbac.authorization.k8s.io":
		return 17000
	case "storage.k8s.io":
		return 16800
	case "admissionregistration.k8s.io", "apiextensions.k8s.io":
		return 16700
	case "scheduling.k8s.io":
		return 16600
	case "coordination.k8s.io":
		return 16500
	case "node.k8s.io":
		return 16300
	case "discovery.k8s.io", "resource.k8s.io":
		return 16200
	case "flowcontrol.apiserver.k8s.io":
		return 16100
	case "internal.apiserver.k8s.io":
		return 16000
	case "storagemigration.k8s.io":
		return 15800
	}
	return 1000
}

// GroupPriority is the groupPriorityMinimum of group's Local APIService
// (groupPriority; 1000 for a group kube does not build in).
func GroupPriority(group string) int32 { return int32(groupPriority(group)) }
