package statefulset

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/litek8s/litek8s/internal/controllers/kit"
	"github.com/litek8s/litek8s/internal/controllers/workload"
)

// notCaughtUpDelay is how soon a set whose own writes the informers have
// not shown yet is looked at again (their events usually bring it back
// sooner).
const notCaughtUpDelay = 50 * time.Millisecond

// sync reconciles the StatefulSet key.
func (c *controller) sync(ctx context.Context, key string) error {
	set, ok, err := kit.Cached(key, func(ns, name string) (*appsv1.StatefulSet, error) {
		return c.sets.StatefulSets(ns).Get(name)
	}, func() { c.written.forget(key) })
	if !ok {
		return err
	}
	if !c.written.caughtUp(key) {
		c.loop.Queue.AddAfter(key, notCaughtUpDelay)
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil || sel.Empty() {
		c.log.Warn("invalid selector, not syncing", "statefulset", key, "err", err)
		return nil
	}
	claimer := c.claimer(set, sel)
	if err := c.adoptRevisions(ctx, claimer, set, sel); err != nil {
		return err
	}
	pods, err := c.claimPods(ctx, claimer, set)
	if err != nil {
		return err
	}
	revs, err := c.listRevisions(set, sel)
	if err != nil {
		return err
	}
	sortRevisions(revs)
	now := time.Now()
	status, err := c.syncRevisionsAndPods(ctx, key, set, pods, revs, now)
	if err != nil {
		return err
	}
	if set.Spec.MinReadySeconds > 0 && status != nil && status.ReadyReplicas != status.AvailableReplicas {
		c.loop.Queue.AddAfter(key, nextAvailabilityCheck(pods, set.Spec.MinReadySeconds, now))
	}
	return nil
}

// syncRevisionsAndPods finds the revisions, acts on the pods, reports
// status and trims the history (kube's UpdateStatefulSet).
func (c *controller) syncRevisionsAndPods(ctx context.Context, key string, set *appsv1.StatefulSet, pods []*corev1.Pod,
	revs []*appsv1.ControllerRevision, now time.Time) (*appsv1.StatefulSetStatus, error) {
	current, update, collisions, err := c.revisions(ctx, key, set, revs)
	if err != nil {
		return nil, errors.Join(err, c.truncateHistory(ctx, set, pods, revs, current, update))
	}
	status, err := c.updateSet(ctx, key, set, current, update, collisions, pods, now)
	if status != nil {
		err = errors.Join(err, c.writeStatus(ctx, key, set, status))
	}
	return status, errors.Join(err, c.truncateHistory(ctx, set, pods, revs, current, update))
}

func (c *controller) claimer(set *appsv1.StatefulSet, sel labels.Selector) *workload.Claimer {
	return &workload.Claimer{Owner: set, Kind: kind, Selector: sel,
		Recheck: func(ctx context.Context) (metav1.Object, error) {
			fresh, err := c.client.AppsV1().StatefulSets(set.Namespace).Get(ctx, set.Name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			if fresh.UID != set.UID {
				return nil, fmt.Errorf("original StatefulSet %s/%s is gone: got uid %s, wanted %s", set.Namespace, set.Name, fresh.UID, set.UID)
			}
			return fresh, nil
		}}
}

// claimPods returns the pods set controls after adopting the orphans of
// its names that match its selector and releasing those that no longer
// match.
func (c *controller) claimPods(ctx context.Context, cl *workload.Claimer, set *appsv1.StatefulSet) ([]*corev1.Pod, error) {
	all, err := c.pods.Pods(set.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	candidates := all[:0:0]
	for _, p := range all {
		if ref := metav1.GetControllerOfNoCopy(p); (ref != nil && ref.UID == set.UID) || isMemberOf(set, p) {
			candidates = append(candidates, p)
		}
	}
	cl.Patch = func(ctx context.Context, ns, name string, p []byte) error {
		_, err := c.client.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, p, metav1.PatchOptions{})
		return err
	}
	return workload.Claim(ctx, cl, candidates)
}

// adoptRevisions adopts the orphan revisions that match set's selector.
func (c *controller) adoptRevisions(ctx context.Context, cl *workload.Claimer, set *appsv1.StatefulSet, sel labels.Selector) error {
	revs, err := c.listRevisions(set, sel)
	if err != nil {
		return err
	}
	var orphans []*appsv1.ControllerRevision
	for _, r := range revs {
		if metav1.GetControllerOfNoCopy(r) == nil {
			orphans = append(orphans, r)
		}
	}
	if len(orphans) == 0 {
		return nil
	}
	cl.Patch = func(ctx context.Context, ns, name string, p []byte) error {
		_, err := c.client.AppsV1().ControllerRevisions(ns).Patch(ctx, name, types.MergePatchType, p, metav1.PatchOptions{})
		return err
	}
	_, err = workload.Claim(ctx, cl, orphans)
	return err
}

// nextAvailabilityCheck is when the first ready pod that is not
// available yet will be (at most minReadySeconds).
func nextAvailabilityCheck(pods []*corev1.Pod, minReady int32, now time.Time) time.Duration {
	d := time.Duration(minReady) * time.Second
	for _, p := range pods {
		if c := workload.ReadyCondition(p); c != nil && c.Status == corev1.ConditionTrue && !isAvailable(p, minReady, now) {
			if left := c.LastTransitionTime.Add(time.Duration(minReady) * time.Second).Sub(now); left > 0 && left < d {
				d = left
			}
		}
	}
	return d + 10*time.Millisecond
}
