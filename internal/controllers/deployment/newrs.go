package deployment

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxRevisionHistory bounds the revision-history annotation, in
// characters (kube's limit); the oldest revisions go first.
const maxRevisionHistory = 2000

// Annotations of a Deployment that are not copied to its ReplicaSets.
var skipCopy = map[string]bool{
	corev1.LastAppliedConfigAnnotation: true, revisionAnnotation: true, revisionHistoryAnnotation: true,
	desiredReplicasAnnotation: true, maxReplicasAnnotation: true, appsv1.DeprecatedRollbackTo: true,
}

func revisionOf(rs *appsv1.ReplicaSet) int64 {
	n, _ := strconv.ParseInt(rs.Annotations[revisionAnnotation], 10, 64)
	return n
}

// findNew returns the oldest ReplicaSet with d's template, nil if none.
func findNew(d *appsv1.Deployment, rss []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	sorted := slices.Clone(rss)
	slices.SortFunc(sorted, func(a, b *appsv1.ReplicaSet) int {
		return cmp.Or(a.CreationTimestamp.Time.Compare(b.CreationTimestamp.Time), strings.Compare(a.Name, b.Name))
	})
	for _, rs := range sorted {
		if equalIgnoreHash(&rs.Spec.Template, &d.Spec.Template) {
			return rs
		}
	}
	return nil
}

// replicaSets splits rss into the new ReplicaSet (d's template) and the
// old ones, brings the new one's revision to the latest, and, when create
// is set, creates it if it does not exist yet.
func (c *controller) replicaSets(ctx context.Context, d *appsv1.Deployment, rss []*appsv1.ReplicaSet, create bool) (*appsv1.ReplicaSet, []*appsv1.ReplicaSet, error) {
	newRS := findNew(d, rss)
	var old []*appsv1.ReplicaSet
	var maxRev int64
	for _, rs := range rss {
		if newRS == nil || rs.UID != newRS.UID {
			old = append(old, rs)
			maxRev = max(maxRev, revisionOf(rs))
		}
	}
	if newRS != nil {
		cp := newRS.DeepCopy()
		if setNewRSAnnotations(d, cp, maxRev+1, true) || cp.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
			cp.Spec.MinReadySeconds = d.Spec.MinReadySeconds
			updated, err := c.client.AppsV1().ReplicaSets(cp.Namespace).Update(ctx, cp, metav1.UpdateOptions{})
			if err != nil {
				return nil, nil, err
			}
			newRS = updated
		}
		return newRS, old, c.syncRevision(ctx, d, newRS, false)
	}
	if !create {
		return nil, old, nil
	}
	newRS, err := c.createNew(ctx, d, old, maxRev+1)
	if err != nil {
		return nil, nil, err
	}
	return newRS, old, c.syncRevision(ctx, d, newRS, true)
}

// createNew creates d's ReplicaSet "<d>-<hash>", sized as the rollout
// allows. A create that meets an existing ReplicaSet of d with the same
// template (made in a previous term, not yet seen by this term's cache)
// takes that one; one of another template is a hash collision:
// status.collisionCount goes up and the next sync uses another name.
func (c *controller) createNew(ctx context.Context, d *appsv1.Deployment, old []*appsv1.ReplicaSet, revision int64) (*appsv1.ReplicaSet, error) {
	hash := ComputeHash(&d.Spec.Template, d.Status.CollisionCount)
	tpl := d.Spec.Template.DeepCopy()
	tpl.Labels = maps.Clone(tpl.Labels)
	if tpl.Labels == nil {
		tpl.Labels = map[string]string{}
	}
	tpl.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	sel := d.Spec.Selector.DeepCopy()
	if sel.MatchLabels == nil {
		sel.MatchLabels = map[string]string{}
	}
	sel.MatchLabels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	zero := int32(0)
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: d.Name + "-" + hash, Namespace: d.Namespace, Labels: maps.Clone(tpl.Labels),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, kind)}},
		Spec: appsv1.ReplicaSetSpec{Replicas: &zero, MinReadySeconds: d.Spec.MinReadySeconds, Selector: sel, Template: *tpl},
	}
	size := newRSReplicas(d, withNew(old, rs), rs)
	rs.Spec.Replicas = &size
	setNewRSAnnotations(d, rs, revision, false)
	created, err := c.client.AppsV1().ReplicaSets(d.Namespace).Create(ctx, rs, metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
		existing, gerr := c.client.AppsV1().ReplicaSets(d.Namespace).Get(ctx, rs.Name, metav1.GetOptions{})
		if gerr != nil {
			return nil, gerr
		}
		if !equalIgnoreHash(&existing.Spec.Template, &d.Spec.Template) {
			return nil, c.collision(ctx, d, rs.Name)
		}
		if ref := metav1.GetControllerOfNoCopy(existing); ref != nil && ref.UID == d.UID {
			return existing, nil
		}
		// An orphan of this template: claim adopts it once the cache
		// shows it.
		return nil, fmt.Errorf("deployment: replicaset %s/%s exists without an owner; adopting it on the next sync", d.Namespace, rs.Name)
	case err != nil:
		c.events.Eventf(d, corev1.EventTypeWarning, "FailedCreate", "Failed to create new replica set %q: %v", rs.Name, err)
		return nil, err
	}
	if size > 0 {
		c.events.Eventf(d, corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled up replica set %s from 0 to %d", created.Name, size)
	}
	return created, nil
}

func (c *controller) collision(ctx context.Context, d *appsv1.Deployment, name string) error {
	n := int32(1)
	if d.Status.CollisionCount != nil {
		n = *d.Status.CollisionCount + 1
	}
	d.Status.CollisionCount = &n
	if _, err := c.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
		return err
	}
	return fmt.Errorf("deployment: hash collision on replicaset %s/%s; collisionCount is now %d", d.Namespace, name, n)
}

// setNewRSAnnotations copies d's annotations to rs and gives it revision
// (keeping the one it had in revision-history); a new ReplicaSet also
// gets the replicas annotations. It reports whether rs changed.
func setNewRSAnnotations(d *appsv1.Deployment, rs *appsv1.ReplicaSet, revision int64, exists bool) bool {
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	changed := false
	for k, v := range d.Annotations {
		if !skipCopy[k] && rs.Annotations[k] != v {
			rs.Annotations[k] = v
			changed = true
		}
	}
	oldRev := rs.Annotations[revisionAnnotation]
	if n, _ := strconv.ParseInt(oldRev, 10, 64); n < revision {
		rs.Annotations[revisionAnnotation] = strconv.FormatInt(revision, 10)
		changed = true
		if oldRev != "" {
			h := oldRev
			if prev := rs.Annotations[revisionHistoryAnnotation]; prev != "" {
				h = prev + "," + oldRev
			}
			for len(h) > maxRevisionHistory && strings.Contains(h, ",") {
				h = h[strings.Index(h, ",")+1:]
			}
			rs.Annotations[revisionHistoryAnnotation] = h
		}
	}
	if !exists {
		rs.Annotations[desiredReplicasAnnotation] = strconv.Itoa(int(replicasOf(d)))
		rs.Annotations[maxReplicasAnnotation] = strconv.Itoa(int(replicasOf(d) + maxSurge(d)))
		changed = true
	}
	return changed
}

// syncRevision gives d its new ReplicaSet's revision annotation and a
// Progressing condition naming the ReplicaSet (created or found).
func (c *controller) syncRevision(ctx context.Context, d *appsv1.Deployment, newRS *appsv1.ReplicaSet, created bool) error {
	if rev := newRS.Annotations[revisionAnnotation]; d.Annotations[revisionAnnotation] != rev {
		cp := d.DeepCopy()
		if cp.Annotations == nil {
			cp.Annotations = map[string]string{}
		}
		cp.Annotations[revisionAnnotation] = rev
		updated, err := c.client.AppsV1().Deployments(d.Namespace).Update(ctx, cp, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		*d = *updated
	}
	cond := condition(d.Status.Conditions, appsv1.DeploymentProgressing)
	if !hasProgressDeadline(d) || (!created && cond != nil) {
		return nil
	}
	reason, msg := "FoundNewReplicaSet", fmt.Sprintf("Found new replica set %q", newRS.Name)
	if created {
		reason, msg = "NewReplicaSetCreated", fmt.Sprintf("Created new replica set %q", newRS.Name)
	}
	st := d.Status.DeepCopy()
	setCondition(st, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, reason, msg))
	return c.writeStatus(ctx, d, *st)
}
