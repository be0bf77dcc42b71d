package disruption

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// expectedScale is kube's getExpectedScale: the sum of the replicas of
// the pods' controllers, each counted once; unmanaged counts the pods
// without a controller.
func (c *controller) expectedScale(pods []*corev1.Pod) (expected int32, unmanaged int, err error) {
	scales := make(map[types.UID]int32)
	for _, pod := range pods {
		ref := metav1.GetControllerOf(pod)
		if ref == nil {
			unmanaged++
			continue
		}
		if _, ok := scales[ref.UID]; ok {
			continue
		}
		uid, scale, found, err := c.controllerScale(ref, pod.Namespace)
		if err != nil {
			return 0, 0, err
		}
		if !found {
			return 0, 0, fmt.Errorf("found no controllers for pod %q", pod.Name)
		}
		scales[uid] = scale
	}
	for _, n := range scales {
		expected += n
	}
	return expected, unmanaged, nil
}

// controllerScale finds the controller ref points to, as kube's finders
// do in order: a ReplicationController, the Deployment of a ReplicaSet,
// a ReplicaSet no Deployment controls, a StatefulSet. It returns the uid
// the scale is counted under and spec.replicas.
func (c *controller) controllerScale(ref *metav1.OwnerReference, ns string) (types.UID, int32, bool, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return "", 0, false, nil
	}
	switch g := gv.Group; {
	case ref.Kind == "ReplicationController" && g == "":
		rc, err := c.rcs.ReplicationControllers(ns).Get(ref.Name)
		if ok, err := found(err, rc != nil && rc.UID == ref.UID); !ok {
			return "", 0, false, err
		}
		return rc.UID, replicas(rc.Spec.Replicas), true, nil
	case ref.Kind == "ReplicaSet" && (g == "apps" || g == "extensions"):
		rs, err := c.rss.ReplicaSets(ns).Get(ref.Name)
		if ok, err := found(err, rs != nil && rs.UID == ref.UID); !ok {
			return "", 0, false, err
		}
		if dref := metav1.GetControllerOf(rs); dref != nil && dref.Kind == "Deployment" {
			d, err := c.deps.Deployments(ns).Get(dref.Name)
			if ok, err := found(err, d != nil && d.UID == dref.UID); !ok {
				return "", 0, false, err
			}
			return d.UID, replicas(d.Spec.Replicas), true, nil
		}
		return rs.UID, replicas(rs.Spec.Replicas), true, nil
	case ref.Kind == "StatefulSet" && g == "apps":
		ss, err := c.sets.StatefulSets(ns).Get(ref.Name)
		if ok, err := found(err, ss != nil && ss.UID == ref.UID); !ok {
			return "", 0, false, err
		}
		return ss.UID, replicas(ss.Spec.Replicas), true, nil
	}
	// TODO: other kinds through their scale subresource, as kube does.
	return "", 0, false, nil
}

// found turns a lister answer into (found, error): not found is no error.
func found(err error, match bool) (bool, error) {
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return match, nil
}

func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}
