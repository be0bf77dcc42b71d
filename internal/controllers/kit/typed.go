package kit

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/tools/cache"
)

// The informers of the built-in resources controllers use, by the store's
// resource name (group-qualified plural). Add one line per new resource.

func (f *Informers) Pods() cache.SharedIndexInformer {
	return Informer[corev1.Pod, corev1.PodList](f, "pods")
}

func (f *Informers) Nodes() cache.SharedIndexInformer {
	return Informer[corev1.Node, corev1.NodeList](f, "nodes")
}

func (f *Informers) Namespaces() cache.SharedIndexInformer {
	return Informer[corev1.Namespace, corev1.NamespaceList](f, "namespaces")
}

func (f *Informers) Services() cache.SharedIndexInformer {
	return Informer[corev1.Service, corev1.ServiceList](f, "services")
}

func (f *Informers) Endpoints() cache.SharedIndexInformer {
	return Informer[corev1.Endpoints, corev1.EndpointsList](f, "endpoints")
}

func (f *Informers) PersistentVolumeClaims() cache.SharedIndexInformer {
	return Informer[corev1.PersistentVolumeClaim, corev1.PersistentVolumeClaimList](f, "persistentvolumeclaims")
}

func (f *Informers) PersistentVolumes() cache.SharedIndexInformer {
	return Informer[corev1.PersistentVolume, corev1.PersistentVolumeList](f, "persistentvolumes")
}

func (f *Informers) Deployments() cache.SharedIndexInformer {
	return Informer[appsv1.Deployment, appsv1.DeploymentList](f, "deployments.apps")
}

func (f *Informers) ReplicaSets() cache.SharedIndexInformer {
	return Informer[appsv1.ReplicaSet, appsv1.ReplicaSetList](f, "replicasets.apps")
}

func (f *Informers) ReplicationControllers() cache.SharedIndexInformer {
	return Informer[corev1.ReplicationController, corev1.ReplicationControllerList](f, "replicationcontrollers")
}

func (f *Informers) Jobs() cache.SharedIndexInformer {
	return Informer[batchv1.Job, batchv1.JobList](f, "jobs.batch")
}

func (f *Informers) CronJobs() cache.SharedIndexInformer {
	return Informer[batchv1.CronJob, batchv1.CronJobList](f, "cronjobs.batch")
}

func (f *Informers) EndpointSlices() cache.SharedIndexInformer {
	return Informer[discoveryv1.EndpointSlice, discoveryv1.EndpointSliceList](f, "endpointslices.discovery.k8s.io")
}

func (f *Informers) Leases() cache.SharedIndexInformer {
	return Informer[coordinationv1.Lease, coordinationv1.LeaseList](f, "leases.coordination.k8s.io")
}

func (f *Informers) ServiceAccounts() cache.SharedIndexInformer {
	return Informer[corev1.ServiceAccount, corev1.ServiceAccountList](f, "serviceaccounts")
}

func (f *Informers) ConfigMaps() cache.SharedIndexInformer {
	return Informer[corev1.ConfigMap, corev1.ConfigMapList](f, "configmaps")
}

// ConfigMapsNamed sees only the ConfigMaps called name (kube's
// root-ca-cert-publisher watches kube-root-ca.crt alone): a store full of
// ConfigMaps is never decoded into the leader's memory.
func (f *Informers) ConfigMapsNamed(name string) cache.SharedIndexInformer {
	return Named[corev1.ConfigMap, corev1.ConfigMapList](f, "configmaps", name)
}

func (f *Informers) CertificateSigningRequests() cache.SharedIndexInformer {
	return Informer[certificatesv1.CertificateSigningRequest, certificatesv1.CertificateSigningRequestList](f,
		"certificatesigningrequests.certificates.k8s.io")
}

func (f *Informers) StatefulSets() cache.SharedIndexInformer {
	return Informer[appsv1.StatefulSet, appsv1.StatefulSetList](f, "statefulsets.apps")
}

func (f *Informers) ControllerRevisions() cache.SharedIndexInformer {
	return Informer[appsv1.ControllerRevision, appsv1.ControllerRevisionList](f, "controllerrevisions.apps")
}
