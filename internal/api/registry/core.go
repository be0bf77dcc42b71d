package registry

import (
	corev1 "k8s.io/api/core/v1"
)

// rcScale: a ReplicationController's Scale reads its selector, a plain
// label map, from spec.selector (kube renders it as a label selector
// string).
var rcScale = &ScaleSpec{SpecReplicas: ".spec.replicas", StatusReplicas: ".status.replicas",
	LabelSelector: ".spec.selector", SelectorIsMap: true}

// coreKinds are the served kinds of the core group (v1).
func coreKinds() []*Resource {
	return []*Resource{
		{Version: "v1", Resource: "namespaces", Singular: "namespace", Kind: "Namespace",
			ShortNames: []string{"ns"}, New: NewOf[corev1.Namespace](), NewList: NewOf[corev1.NamespaceList](),
			Normalize: defaultNamespace, Prepare: prepareNamespace, Status: true,
			Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}},
		{Version: "v1", Resource: "configmaps", Singular: "configmap", Kind: "ConfigMap", Namespaced: true,
			ShortNames: []string{"cm"}, New: NewOf[corev1.ConfigMap](), NewList: NewOf[corev1.ConfigMapList](),
			Validate: validateConfigMap},
		{Version: "v1", Resource: "secrets", Singular: "secret", Kind: "Secret", Namespaced: true,
			New: NewOf[corev1.Secret](), NewList: NewOf[corev1.SecretList](), Normalize: prepareSecret,
			Validate: validateSecret},
		{Version: "v1", Resource: "services", Singular: "service", Kind: "Service", Namespaced: true,
			ShortNames: []string{"svc"}, Categories: []string{"all"},
			New: NewOf[corev1.Service](), NewList: NewOf[corev1.ServiceList](), Normalize: defaultService,
			Prepare: prepareService, Status: true, Validate: validateService,
			PrepareUpdate: prepareServiceUpdate},
		{Version: "v1", Resource: "pods", Singular: "pod", Kind: "Pod", Namespaced: true,
			ShortNames: []string{"po"}, Categories: []string{"all"}, HasGeneration: true,
			New: NewOf[corev1.Pod](), NewList: NewOf[corev1.PodList](), Prepare: preparePod, Normalize: defaultPod,
			Validate: validatePod, Status: true, Binding: true, Eviction: true, PodSubresources: true},
		{Version: "v1", Resource: "nodes", Singular: "node", Kind: "Node",
			ShortNames: []string{"no"}, New: NewOf[corev1.Node](), NewList: NewOf[corev1.NodeList](),
			Prepare: prepareNode, Status: true},
		{Version: "v1", Resource: "events", Singular: "event", Kind: "Event", Namespaced: true,
			ShortNames: []string{"ev"}, New: NewOf[corev1.Event](), NewList: NewOf[corev1.EventList]()},
		{Version: "v1", Resource: "serviceaccounts", Singular: "serviceaccount", Kind: "ServiceAccount",
			Namespaced: true, ShortNames: []string{"sa"}, TokenRequest: true,
			New: NewOf[corev1.ServiceAccount](), NewList: NewOf[corev1.ServiceAccountList]()},
		{Version: "v1", Resource: "endpoints", Singular: "endpoints", Kind: "Endpoints", Namespaced: true,
			ShortNames: []string{"ep"}, New: NewOf[corev1.Endpoints](), NewList: NewOf[corev1.EndpointsList](),
			Normalize:   defaultEndpoints,
			Deprecation: "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"},
		{Version: "v1", Resource: "persistentvolumeclaims", Singular: "persistentvolumeclaim",
			Kind: "PersistentVolumeClaim", Namespaced: true, ShortNames: []string{"pvc"},
			New: NewOf[corev1.PersistentVolumeClaim](), NewList: NewOf[corev1.PersistentVolumeClaimList](),
			Prepare: preparePersistentVolumeClaim, Normalize: defaultPersistentVolumeClaim, Status: true,
			Validate: validatePersistentVolumeClaim},
		{Version: "v1", Resource: "persistentvolumes", Singular: "persistentvolume", Kind: "PersistentVolume",
			ShortNames: []string{"pv"}, New: NewOf[corev1.PersistentVolume](), NewList: NewOf[corev1.PersistentVolumeList](),
			Prepare: preparePersistentVolume, Normalize: defaultPersistentVolume, Status: true,
			Validate: validatePersistentVolume},
		{Version: "v1", Resource: "limitranges", Singular: "limitrange", Kind: "LimitRange", Namespaced: true,
			ShortNames: []string{"limits"}, New: NewOf[corev1.LimitRange](), NewList: NewOf[corev1.LimitRangeList](),
			Normalize: defaultLimitRange},
		{Version: "v1", Resource: "resourcequotas", Singular: "resourcequota", Kind: "ResourceQuota", Namespaced: true,
			ShortNames: []string{"quota"}, New: NewOf[corev1.ResourceQuota](), NewList: NewOf[corev1.ResourceQuotaList](),
			Prepare: prepareResourceQuota, Status: true},
		{Version: "v1", Resource: "podtemplates", Singular: "podtemplate", Kind: "PodTemplate", Namespaced: true,
			HasGeneration: true, New: NewOf[corev1.PodTemplate](), NewList: NewOf[corev1.PodTemplateList](),
			Normalize: defaultPodTemplate, Validate: validatePodTemplate},
		{Version: "v1", Resource: "replicationcontrollers", Singular: "replicationcontroller",
			Kind: "ReplicationController", Namespaced: true, ShortNames: []string{"rc"}, Categories: []string{"all"},
			HasGeneration: true, New: NewOf[corev1.ReplicationController](),
			NewList: NewOf[corev1.ReplicationControllerList](), Prepare: prepareReplicationController,
			Normalize: defaultReplicationController, Status: true, Scale: rcScale,
			Validate: validateReplicationController},
	}
}
