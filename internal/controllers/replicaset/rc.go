package replicaset

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// RCName is kube's name of the ReplicationController controller; its
// writes and events use it.
const RCName = "replication-controller"

// NewReplicationController builds the term's ReplicationController
// controller (kube's "replicationcontroller"): the ReplicaSet controller
// run over ReplicationControllers, each seen as a ReplicaSet whose
// selector is the RC's label map.
func NewReplicationController(kc *kit.Context, cfg Config) kit.Controller {
	return newController(kc, cfg, replicationControllers(kc))
}

func replicationControllers(kc *kit.Context) *source {
	inf := kc.Informers.ReplicationControllers()
	lister := corelisters.NewReplicationControllerLister(inf.GetIndexer())
	return &source{name: RCName, short: "replicationcontroller", kind: corev1.SchemeGroupVersion.WithKind("ReplicationController"),
		informer: inf,
		get: func(ns, name string) (*appsv1.ReplicaSet, error) {
			rc, err := lister.ReplicationControllers(ns).Get(name)
			if err != nil {
				return nil, err
			}
			return rcToReplicaSet(rc), nil
		},
		list: func(ns string) ([]*appsv1.ReplicaSet, error) {
			rcs, err := lister.ReplicationControllers(ns).List(labels.Everything())
			out := make([]*appsv1.ReplicaSet, len(rcs))
			for i, rc := range rcs {
				out[i] = rcToReplicaSet(rc)
			}
			return out, err
		},
		fetch: func(ctx context.Context, client kubernetes.Interface, ns, name string) (metav1.Object, error) {
			return client.CoreV1().ReplicationControllers(ns).Get(ctx, name, metav1.GetOptions{})
		},
		writeStatus: func(ctx context.Context, client kubernetes.Interface, rs *appsv1.ReplicaSet) error {
			_, err := client.CoreV1().ReplicationControllers(rs.Namespace).UpdateStatus(ctx, replicaSetToRC(rs), metav1.UpdateOptions{})
			return err
		},
		object: func(rs *appsv1.ReplicaSet) runtime.Object { return replicaSetToRC(rs) },
	}
}

// rcToReplicaSet is rc seen as a ReplicaSet: the same metadata, its map
// selector as matchLabels, its status and conditions.
func rcToReplicaSet(rc *corev1.ReplicationController) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{ObjectMeta: *rc.ObjectMeta.DeepCopy(), Spec: appsv1.ReplicaSetSpec{
		Replicas: rc.Spec.Replicas, MinReadySeconds: rc.Spec.MinReadySeconds,
		Selector: &metav1.LabelSelector{MatchLabels: rc.Spec.Selector}},
		Status: appsv1.ReplicaSetStatus{Replicas: rc.Status.Replicas, FullyLabeledReplicas: rc.Status.FullyLabeledReplicas,
			ReadyReplicas: rc.Status.ReadyReplicas, AvailableReplicas: rc.Status.AvailableReplicas,
			ObservedGeneration: rc.Status.ObservedGeneration}}
	if rc.Spec.Template != nil {
		rs.Spec.Template = *rc.Spec.Template.DeepCopy()
	}
	for _, c := range rc.Status.Conditions {
		rs.Status.Conditions = append(rs.Status.Conditions, appsv1.ReplicaSetCondition{
			Type: appsv1.ReplicaSetConditionType(c.Type), Status: c.Status,
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message})
	}
	return rs
}

// replicaSetToRC converts back what rcToReplicaSet converted.
func replicaSetToRC(rs *appsv1.ReplicaSet) *corev1.ReplicationController {
	rc := &corev1.ReplicationController{ObjectMeta: *rs.ObjectMeta.DeepCopy(), Spec: corev1.ReplicationControllerSpec{
		Replicas: rs.Spec.Replicas, MinReadySeconds: rs.Spec.MinReadySeconds, Template: rs.Spec.Template.DeepCopy()},
		Status: corev1.ReplicationControllerStatus{Replicas: rs.Status.Replicas, FullyLabeledReplicas: rs.Status.FullyLabeledReplicas,
			ReadyReplicas: rs.Status.ReadyReplicas, AvailableReplicas: rs.Status.AvailableReplicas,
			ObservedGeneration: rs.Status.ObservedGeneration}}
	if rs.Spec.Selector != nil {
		rc.Spec.Selector = rs.Spec.Selector.MatchLabels
	}
	for _, c := range rs.Status.Conditions {
		rc.Status.Conditions = append(rc.Status.Conditions, corev1.ReplicationControllerCondition{
			Type: corev1.ReplicationControllerConditionType(c.Type), Status: c.Status,
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message})
	}
	return rc
}
