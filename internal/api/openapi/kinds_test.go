package openapi

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
)

// allVerbs is what litek8s serves for every kind today.
func allVerbs() []string {
	return []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
}

// servedKinds is the kind table litek8s serves.
func servedKinds() []Kind {
	k := func(group, version, resource string, namespaced bool, obj, list any) Kind {
		return Kind{
			Group: group, Version: version, Resource: resource, Kind: reflect.TypeOf(obj).Name(),
			Namespaced: namespaced, Type: reflect.TypeOf(obj), ListType: reflect.TypeOf(list), Verbs: allVerbs(),
		}
	}
	namespaces := k("", "v1", "namespaces", false, corev1.Namespace{}, corev1.NamespaceList{})
	namespaces.Verbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"} // as in kube
	return []Kind{
		namespaces,
		k("", "v1", "configmaps", true, corev1.ConfigMap{}, corev1.ConfigMapList{}),
		k("", "v1", "secrets", true, corev1.Secret{}, corev1.SecretList{}),
		k("", "v1", "services", true, corev1.Service{}, corev1.ServiceList{}),
		k("", "v1", "pods", true, corev1.Pod{}, corev1.PodList{}),
		k("", "v1", "nodes", false, corev1.Node{}, corev1.NodeList{}),
		k("", "v1", "events", true, corev1.Event{}, corev1.EventList{}),
		k("", "v1", "serviceaccounts", true, corev1.ServiceAccount{}, corev1.ServiceAccountList{}),
		k("apps", "v1", "deployments", true, appsv1.Deployment{}, appsv1.DeploymentList{}),
		k("apps", "v1", "replicasets", true, appsv1.ReplicaSet{}, appsv1.ReplicaSetList{}),
		k("coordination.k8s.io", "v1", "leases", true, coordinationv1.Lease{}, coordinationv1.LeaseList{}),
	}
}

// newServedHandler builds the handler for servedKinds.
func newServedHandler(t testing.TB) *Handler {
	t.Helper()
	h, err := New(servedKinds())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := h.Build(); err != nil {
		t.Fatalf("Build: %v", err)
	}
	return h
}

// mustDocs returns h's built documents.
func mustDocs(t testing.TB, h *Handler) map[string]document {
	t.Helper()
	set, err := h.load()
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return set.docs
}

// newServedHandlerFor builds the handler for kinds.
func newServedHandlerFor(t testing.TB, kinds []Kind) *Handler {
	t.Helper()
	h, err := New(kinds)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := h.Build(); err != nil {
		t.Fatalf("Build: %v", err)
	}
	return h
}

// servedKind returns the served kind of resource.
func servedKind(t testing.TB, resource string) Kind {
	t.Helper()
	for _, k := range servedKinds() {
		if k.Resource == resource {
			return k
		}
	}
	t.Fatalf("no served kind %q", resource)
	return Kind{}
}
