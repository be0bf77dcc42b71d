package deployment

import (
	"context"
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/litek8s/litek8s/internal/controllers/kit"
	"github.com/litek8s/litek8s/internal/controllers/workload"
)

// The annotations kube's deployment controller and kubectl share.
const (
	revisionAnnotation        = "deployment.kubernetes.io/revision"
	revisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
	desiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	maxReplicasAnnotation     = "deployment.kubernetes.io/max-replicas"
)

// sync reconciles the Deployment key.
func (c *controller) sync(ctx context.Context, key string) error {
	cached, ok, err := kit.Cached(key, func(ns, name string) (*appsv1.Deployment, error) {
		return c.dLister.Deployments(ns).Get(name)
	}, nil)
	if !ok {
		return err
	}
	d := cached.DeepCopy()
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || sel.Empty() {
		c.events.Event(d, corev1.EventTypeWarning, "SelectingAll", "This deployment is selecting all pods. A non-empty selector is required.")
		return nil
	}
	rss, err := c.claim(ctx, d, sel)
	if err != nil {
		return err
	}
	if d.DeletionTimestamp != nil {
		return c.syncStatusOnly(ctx, d, rss)
	}
	if err := c.checkPaused(ctx, d); err != nil {
		return err
	}
	if d.Spec.Paused || isScalingEvent(d, rss) {
		return c.syncScale(ctx, d, rss)
	}
	if !isRolling(d) {
		return c.rolloutRecreate(ctx, d, rss)
	}
	return c.rolloutRolling(ctx, d, rss)
}

// claim returns the ReplicaSets d controls, adopting and releasing.
func (c *controller) claim(ctx context.Context, d *appsv1.Deployment, sel labels.Selector) ([]*appsv1.ReplicaSet, error) {
	all, err := c.rsLister.ReplicaSets(d.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	cl := &workload.Claimer{Owner: d, Kind: kind, Selector: sel,
		Recheck: func(ctx context.Context) (metav1.Object, error) {
			return c.client.AppsV1().Deployments(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
		},
		Patch: func(ctx context.Context, ns, name string, p []byte) error {
			_, err := c.client.AppsV1().ReplicaSets(ns).Patch(ctx, name, types.MergePatchType, p, metav1.PatchOptions{})
			return err
		}}
	return workload.Claim(ctx, cl, all)
}

// syncScale is kube's sync: scale the ReplicaSets to the Deployment's
// size (proportionally during a rollout) without rolling anything out;
// a paused Deployment also cleans up old revisions.
func (c *controller) syncScale(ctx context.Context, d *appsv1.Deployment, rss []*appsv1.ReplicaSet) error {
	newRS, old, err := c.replicaSets(ctx, d, rss, false)
	if err != nil {
		return err
	}
	if err := c.scale(ctx, d, newRS, old); err != nil {
		return err
	}
	if d.Spec.Paused {
		if err := c.cleanup(ctx, d, old); err != nil {
			return err
		}
	}
	return c.updateStatus(ctx, d, calculateStatus(d, withNew(old, newRS), newRS))
}

func (c *controller) syncStatusOnly(ctx context.Context, d *appsv1.Deployment, rss []*appsv1.ReplicaSet) error {
	newRS, old, err := c.replicaSets(ctx, d, rss, false)
	if err != nil {
		return err
	}
	return c.updateStatus(ctx, d, calculateStatus(d, withNew(old, newRS), newRS))
}

// isScalingEvent reports whether d's size changed since its active
// ReplicaSets were last sized (their desired-replicas annotation).
func isScalingEvent(d *appsv1.Deployment, rss []*appsv1.ReplicaSet) bool {
	for _, rs := range rss {
		if rsReplicas(rs) == 0 {
			continue
		}
		if v, ok := rs.Annotations[desiredReplicasAnnotation]; ok {
			if n, err := strconv.ParseInt(v, 10, 32); err == nil && int32(n) != replicasOf(d) {
				return true
			}
		}
	}
	return false
}

// scaleRS sets rs's size and its replicas annotations (Update with rs's
// resourceVersion) and records the event; it returns the updated
// ReplicaSet.
func (c *controller) scaleRS(ctx context.Context, d *appsv1.Deployment, rs *appsv1.ReplicaSet, size int32) (*appsv1.ReplicaSet, error) {
	from := rsReplicas(rs)
	desired, maxReplicas := strconv.Itoa(int(replicasOf(d))), strconv.Itoa(int(replicasOf(d)+maxSurge(d)))
	if from == size && rs.Annotations[desiredReplicasAnnotation] == desired && rs.Annotations[maxReplicasAnnotation] == maxReplicas {
		return rs, nil
	}
	cp := rs.DeepCopy()
	cp.Spec.Replicas = &size
	if cp.Annotations == nil {
		cp.Annotations = map[string]string{}
	}
	cp.Annotations[desiredReplicasAnnotation], cp.Annotations[maxReplicasAnnotation] = desired, maxReplicas
	out, err := c.client.AppsV1().ReplicaSets(rs.Namespace).Update(ctx, cp, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("deployment: scale replicaset %s/%s to %d: %w", rs.Namespace, rs.Name, size, err)
	}
	switch {
	case size > from:
		c.events.Eventf(d, corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled up replica set %s from %d to %d", rs.Name, from, size)
	case size < from:
		c.events.Eventf(d, corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled down replica set %s from %d to %d", rs.Name, from, size)
	}
	return out, nil
}

func withNew(old []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	all := append([]*appsv1.ReplicaSet(nil), old...)
	if newRS != nil {
		all = append(all, newRS)
	}
	return all
}

func active(rss []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, rs := range rss {
		if rs != nil && rsReplicas(rs) > 0 {
			out = append(out, rs)
		}
	}
	return out
}

// isGone: the object was deleted or replaced meanwhile.
func isGone(err error) bool { return apierrors.IsNotFound(err) || apierrors.IsConflict(err) }
