package deployment

import (
	"cmp"
	"context"
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// rolloutRolling makes one step of a rolling update: grow the new
// ReplicaSet within maxSurge, or shrink old ones within maxUnavailable;
// once complete, drop revisions beyond the history limit.
func (c *controller) rolloutRolling(ctx context.Context, d *appsv1.Deployment, rss []*appsv1.ReplicaSet) error {
	newRS, old, err := c.replicaSets(ctx, d, rss, true)
	if err != nil {
		return err
	}
	all := withNew(old, newRS)
	if size := newSize(d, all, newRS); size != rsReplicas(newRS) {
		if _, err := c.scaleRS(ctx, d, newRS, size); err != nil {
			return err
		}
		return c.syncRolloutStatus(ctx, d, all, newRS)
	}
	scaled, err := c.scaleDownOld(ctx, d, all, old, newRS)
	if err != nil || scaled {
		if err != nil {
			return err
		}
		return c.syncRolloutStatus(ctx, d, all, newRS)
	}
	if complete(d, &d.Status) {
		if err := c.cleanup(ctx, d, old); err != nil {
			return err
		}
	}
	return c.syncRolloutStatus(ctx, d, all, newRS)
}

// newSize is what the new ReplicaSet is to be sized to now.
func newSize(d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) int32 {
	if rsReplicas(newRS) >= replicasOf(d) {
		return replicasOf(d)
	}
	return newRSReplicas(d, all, newRS)
}

// scaleDownOld shrinks old ReplicaSets, oldest first: first their
// unavailable pods, then available ones as long as replicas-maxUnavailable
// stay available.
func (c *controller) scaleDownOld(ctx context.Context, d *appsv1.Deployment, all, old []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) (bool, error) {
	old = active(old)
	budget := oldScaleDownBudget(d, all, newRS)
	if len(old) == 0 || budget <= 0 {
		return false, nil
	}
	slices.SortFunc(old, func(a, b *appsv1.ReplicaSet) int {
		return cmp.Or(a.CreationTimestamp.Time.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Name, b.Name))
	})
	var done int32
	for i, rs := range old { // unhealthy replicas first
		if done >= budget {
			break
		}
		n := min(budget-done, rsReplicas(rs)-rs.Status.AvailableReplicas)
		if n <= 0 {
			continue
		}
		updated, err := c.scaleRS(ctx, d, rs, rsReplicas(rs)-n)
		if err != nil {
			return done > 0, err
		}
		old[i] = updated
		done += n
	}
	left := min(budget-done, availableScaleDown(d, all))
	for _, rs := range old {
		if left <= 0 {
			break
		}
		n := min(left, rsReplicas(rs))
		if n <= 0 {
			continue
		}
		if _, err := c.scaleRS(ctx, d, rs, rsReplicas(rs)-n); err != nil {
			return true, err
		}
		left -= n
		done += n
	}
	return done > 0, nil
}

// rolloutRecreate scales every old ReplicaSet to zero, waits until their
// pods are gone, then scales the new one up.
func (c *controller) rolloutRecreate(ctx context.Context, d *appsv1.Deployment, rss []*appsv1.ReplicaSet) error {
	newRS, old, err := c.replicaSets(ctx, d, rss, false)
	if err != nil {
		return err
	}
	scaled := false
	for _, rs := range active(old) {
		if _, err := c.scaleRS(ctx, d, rs, 0); err != nil {
			return err
		}
		scaled = true
	}
	if scaled || c.oldPodsRunning(d, newRS, old) {
		return c.syncRolloutStatus(ctx, d, withNew(old, newRS), newRS)
	}
	if newRS == nil {
		if newRS, old, err = c.replicaSets(ctx, d, rss, true); err != nil {
			return err
		}
	}
	if _, err := c.scaleRS(ctx, d, newRS, replicasOf(d)); err != nil {
		return err
	}
	if complete(d, &d.Status) {
		if err := c.cleanup(ctx, d, old); err != nil {
			return err
		}
	}
	return c.syncRolloutStatus(ctx, d, withNew(old, newRS), newRS)
}

// oldPodsRunning reports whether an old ReplicaSet still has pods that
// have not finished (pods being deleted included).
func (c *controller) oldPodsRunning(d *appsv1.Deployment, newRS *appsv1.ReplicaSet, old []*appsv1.ReplicaSet) bool {
	uids := map[any]bool{}
	for _, rs := range old {
		if rs.Status.Replicas > 0 {
			return true
		}
		uids[rs.UID] = true
	}
	pods, _ := c.pods.Pods(d.Namespace).List(labels.Everything())
	for _, p := range pods {
		ref := metav1.GetControllerOfNoCopy(p)
		if ref == nil || !uids[ref.UID] || (newRS != nil && ref.UID == newRS.UID) {
			continue
		}
		if p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded {
			return true
		}
	}
	return false
}

// scale sizes the ReplicaSets to d's replicas without rolling out: the one
// active ReplicaSet takes them all; during a rollout the change is spread
// over the active ones in proportion to their size.
func (c *controller) scale(ctx context.Context, d *appsv1.Deployment, newRS *appsv1.ReplicaSet, old []*appsv1.ReplicaSet) error {
	act := active(withNew(old, newRS))
	switch {
	case len(act) == 0 && newRS != nil:
		_, err := c.scaleRS(ctx, d, newRS, replicasOf(d))
		return err
	case len(act) == 0:
		return c.scaleLatest(ctx, d, old)
	case len(act) == 1:
		_, err := c.scaleRS(ctx, d, act[0], replicasOf(d))
		return err
	}
	if newRS != nil && rsReplicas(newRS) == replicasOf(d) && newRS.Status.AvailableReplicas == replicasOf(d) {
		for _, rs := range active(old) { // the new one is saturated
			if _, err := c.scaleRS(ctx, d, rs, 0); err != nil {
				return err
			}
		}
		return nil
	}
	var total int32
	for _, rs := range act {
		total += rsReplicas(rs)
	}
	allowed := replicasOf(d)
	if replicasOf(d) > 0 {
		allowed += maxSurge(d)
	}
	delta := allowed - total
	if delta == 0 {
		return nil
	}
	// Largest first; among equals the newest gets a surplus, the oldest
	// gives first.
	slices.SortFunc(act, func(a, b *appsv1.ReplicaSet) int {
		if s := cmp.Compare(rsReplicas(b), rsReplicas(a)); s != 0 {
			return s
		}
		t := a.CreationTimestamp.Time.Compare(b.CreationTimestamp.Time)
		if delta > 0 {
			return -t
		}
		return t
	})
	sizes, sizedFor := make([]int32, len(act)), make([]int32, len(act))
	for i, rs := range act {
		sizes[i] = rsReplicas(rs)
		if n, err := strconv.Atoi(rs.Annotations[maxReplicasAnnotation]); err == nil && n > 0 {
			sizedFor[i] = int32(n)
		} else {
			sizedFor[i] = d.Status.Replicas
		}
	}
	for i, add := range proportions(sizes, sizedFor, replicasOf(d)+maxSurge(d), replicasOf(d), delta) {
		if _, err := c.scaleRS(ctx, d, act[i], sizes[i]+add); err != nil {
			return err
		}
	}
	return nil
}

// scaleLatest sizes the ReplicaSet of the highest revision when none is
// active (a Deployment scaled up from zero while paused).
func (c *controller) scaleLatest(ctx context.Context, d *appsv1.Deployment, old []*appsv1.ReplicaSet) error {
	if len(old) == 0 || replicasOf(d) == 0 {
		return nil
	}
	latest := slices.MaxFunc(old, func(a, b *appsv1.ReplicaSet) int { return cmp.Compare(revisionOf(a), revisionOf(b)) })
	_, err := c.scaleRS(ctx, d, latest, replicasOf(d))
	return err
}

// cleanup deletes the oldest ReplicaSets without pods beyond
// revisionHistoryLimit.
func (c *controller) cleanup(ctx context.Context, d *appsv1.Deployment, old []*appsv1.ReplicaSet) error {
	if d.Spec.RevisionHistoryLimit == nil {
		return nil
	}
	var cands []*appsv1.ReplicaSet
	for _, rs := range old {
		if rs.DeletionTimestamp == nil {
			cands = append(cands, rs)
		}
	}
	diff := len(cands) - int(*d.Spec.RevisionHistoryLimit)
	if diff <= 0 {
		return nil
	}
	slices.SortFunc(cands, func(a, b *appsv1.ReplicaSet) int {
		return cmp.Or(cmp.Compare(revisionOf(a), revisionOf(b)), a.CreationTimestamp.Time.Compare(b.CreationTimestamp.Time))
	})
	for _, rs := range cands[:diff] {
		if rs.Status.Replicas != 0 || rsReplicas(rs) != 0 || rs.Generation > rs.Status.ObservedGeneration {
			continue
		}
		err := c.client.AppsV1().ReplicaSets(rs.Namespace).Delete(ctx, rs.Name,
			metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(rs.UID))})
		if err != nil && !isGone(err) {
			return err
		}
	}
	return nil
}
