package registry

import (
	appsv1 "k8s.io/api/apps/v1"
)

// appsKinds are the served kinds of apps/v1.
func appsKinds() []*Resource {
	return []*Resource{
		{Group: "apps", Version: "v1", Resource: "deployments", Singular: "deployment", Kind: "Deployment",
			Namespaced: true, ShortNames: []string{"deploy"}, Categories: []string{"all"}, HasGeneration: true,
			New: NewOf[appsv1.Deployment](), NewList: NewOf[appsv1.DeploymentList](), Normalize: prepareDeployment,
			Status: true, Scale: defaultScale, Validate: validateDeployment},
		{Group: "apps", Version: "v1", Resource: "replicasets", Singular: "replicaset", Kind: "ReplicaSet",
			Namespaced: true, ShortNames: []string{"rs"}, Categories: []string{"all"}, HasGeneration: true,
			New: NewOf[appsv1.ReplicaSet](), NewList: NewOf[appsv1.ReplicaSetList](), Normalize: prepareReplicaSet,
			Status: true, Scale: defaultScale, Validate: validateReplicaSet},
		{Group: "apps", Version: "v1", Resource: "statefulsets", Singular: "statefulset", Kind: "StatefulSet",
			Namespaced: true, ShortNames: []string{"sts"}, Categories: []string{"all"}, HasGeneration: true,
			New: NewOf[appsv1.StatefulSet](), NewList: NewOf[appsv1.StatefulSetList](), Prepare: prepareStatefulSet,
			Normalize: defaultStatefulSet, Status: true, Scale: defaultScale, Validate: validateStatefulSet},
		{Group: "apps", Version: "v1", Resource: "daemonsets", Singular: "daemonset", Kind: "DaemonSet",
			Namespaced: true, ShortNames: []string{"ds"}, Categories: []string{"all"}, HasGeneration: true,
			New: NewOf[appsv1.DaemonSet](), NewList: NewOf[appsv1.DaemonSetList](), Prepare: prepareDaemonSet,
			PrepareUpdate: prepareDaemonSetUpdate, Normalize: defaultDaemonSet, Status: true, Validate: validateDaemonSet},
		{Group: "apps", Version: "v1", Resource: "controllerrevisions", Singular: "controllerrevision",
			Kind: "ControllerRevision", Namespaced: true,
			New: NewOf[appsv1.ControllerRevision](), NewList: NewOf[appsv1.ControllerRevisionList](),
			Validate: validateControllerRevision},
	}
}
