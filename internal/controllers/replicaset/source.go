package replicaset

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// source is the kind a controller runs over, seen as ReplicaSets: the
// ReplicaSets themselves, or ReplicationControllers converted to
// ReplicaSets and back (kube runs its ReplicaSet controller over
// ReplicationControllers the same way). Everything but the source is
// shared.
type source struct {
	// name is kube's controller name: the client and event source.
	name string
	// short is the controller's name in the manager (Config.Disabled).
	short    string
	kind     schema.GroupVersionKind
	informer cache.SharedIndexInformer
	// get and list read the informer's cache.
	get  func(ns, name string) (*appsv1.ReplicaSet, error)
	list func(ns string) ([]*appsv1.ReplicaSet, error)
	// fetch reads the object from the API (not the cache).
	fetch func(ctx context.Context, client kubernetes.Interface, ns, name string) (metav1.Object, error)
	// writeStatus writes rs.Status to the object's status subresource
	// (with rs's resourceVersion).
	writeStatus func(ctx context.Context, client kubernetes.Interface, rs *appsv1.ReplicaSet) error
	// object is the object events are recorded on.
	object func(rs *appsv1.ReplicaSet) runtime.Object
}

// replicaSets is the source of the ReplicaSet controller.
func replicaSets(kc *kit.Context) *source {
	inf := kc.Informers.ReplicaSets()
	lister := appslisters.NewReplicaSetLister(inf.GetIndexer())
	return &source{name: Name, short: "replicaset", kind: appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), informer: inf,
		get: func(ns, name string) (*appsv1.ReplicaSet, error) { return lister.ReplicaSets(ns).Get(name) },
		list: func(ns string) ([]*appsv1.ReplicaSet, error) {
			return lister.ReplicaSets(ns).List(labels.Everything())
		},
		fetch: func(ctx context.Context, client kubernetes.Interface, ns, name string) (metav1.Object, error) {
			return client.AppsV1().ReplicaSets(ns).Get(ctx, name, metav1.GetOptions{})
		},
		writeStatus: func(ctx context.Context, client kubernetes.Interface, rs *appsv1.ReplicaSet) error {
			_, err := client.AppsV1().ReplicaSets(rs.Namespace).UpdateStatus(ctx, rs, metav1.UpdateOptions{})
			return err
		},
		object: func(rs *appsv1.ReplicaSet) runtime.Object { return rs },
	}
}
