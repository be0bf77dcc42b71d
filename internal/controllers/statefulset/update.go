package statefulset

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/litek8s/litek8s/internal/controllers/workload"
)

// run is one sync of one set: its revisions, its pods by ordinal.
type run struct {
	c                  *controller
	key                string
	set                *appsv1.StatefulSet
	currentSet, update *appsv1.StatefulSet // set at the current and update revisions
	currentRev, updRev *appsv1.ControllerRevision
	now                time.Time
	monotonic          bool // OrderedReady
	replicas           []*corev1.Pod
	condemned          []*corev1.Pod // out of range, highest ordinal first
	firstUnavailable   *corev1.Pod
	status             appsv1.StatefulSetStatus
}

// updateSet creates, updates and deletes set's pods toward spec (kube's
// updateStatefulSet) and returns the status to report; a non-nil status
// is reported even with an error.
func (c *controller) updateSet(ctx context.Context, key string, set *appsv1.StatefulSet, currentRev, updRev *appsv1.ControllerRevision,
	collisions int32, pods []*corev1.Pod, now time.Time) (*appsv1.StatefulSetStatus, error) {
	if t := set.Spec.UpdateStrategy.Type; t != appsv1.RollingUpdateStatefulSetStrategyType && t != appsv1.OnDeleteStatefulSetStrategyType {
		// kube 1.37's Recreate is alpha, off by default: kube refuses it so.
		err := fmt.Errorf("statefulset %s/%s uses %s strategy but feature gate StatefulSetRecreateStrategy is disabled",
			set.Namespace, set.Name, t)
		c.events.Event(set, corev1.EventTypeWarning, "UnknownStrategy", err.Error())
		return nil, err
	}
	currentSet, err := applyRevision(set, currentRev)
	if err != nil {
		return nil, err
	}
	updateSet, err := applyRevision(set, updRev)
	if err != nil {
		return nil, err
	}
	r := &run{c: c, key: key, set: set, currentSet: currentSet, update: updateSet, currentRev: currentRev, updRev: updRev,
		now: now, monotonic: set.Spec.PodManagementPolicy != appsv1.ParallelPodManagement}
	r.status = appsv1.StatefulSetStatus{ObservedGeneration: set.Generation, CurrentRevision: currentRev.Name,
		UpdateRevision: updRev.Name, CollisionCount: &collisions, Conditions: slices.Clone(set.Status.Conditions)}
	if set.DeletionTimestamp != nil { // being deleted: only report
		countPods(&r.status, set.Spec.MinReadySeconds, currentRev, updRev, now, pods)
		return &r.status, nil
	}
	r.partition(pods)
	stopped, err := r.reconcile(ctx)
	countPods(&r.status, set.Spec.MinReadySeconds, currentRev, updRev, now, r.replicas, r.condemned)
	if stopped || err != nil || set.Spec.UpdateStrategy.Type != appsv1.RollingUpdateStatefulSetStrategyType {
		return &r.status, err
	}
	return &r.status, r.rollingUpdate(ctx)
}

// partition sorts pods into replicas (by ordinal; the missing ones built
// at their revision, not created yet) and condemned.
func (r *run) partition(pods []*corev1.Pod) {
	start, n := startOrdinal(r.set), replicasOf(r.set)
	r.replicas = make([]*corev1.Pod, n)
	for _, p := range pods {
		switch o := ordinalOf(p); {
		case o >= start && o < start+n:
			r.replicas[o-start] = p
		case o >= 0:
			r.condemned = append(r.condemned, p)
		}
	}
	for i, p := range r.replicas {
		if p == nil {
			r.replicas[i] = newVersionedPod(r.currentSet, r.update, r.currentRev.Name, r.updRev.Name, start+i)
		}
	}
	slices.SortFunc(r.condemned, func(a, b *corev1.Pod) int { return ordinalOf(b) - ordinalOf(a) })
	minReady := r.set.Spec.MinReadySeconds
	for _, p := range r.replicas {
		if r.firstUnavailable == nil && isUnavailable(p, minReady, r.now) {
			r.firstUnavailable = p
		}
	}
	for i := len(r.condemned) - 1; i >= 0 && r.firstUnavailable == nil; i-- {
		if isUnavailable(r.condemned[i], minReady, r.now) {
			r.firstUnavailable = r.condemned[i]
		}
	}
}

// reconcile brings the replicas up (creating, recreating failed pods,
// fixing identity and storage), then the condemned down; stopped: an
// OrderedReady set waits for a pod (no rolling update in this sync).
func (r *run) reconcile(ctx context.Context) (stopped bool, err error) {
	if stop, err := r.forAll(ctx, r.replicas, r.processReplica); stop || err != nil {
		return stop, err
	}
	fixClaims := func(ctx context.Context, i int) (bool, error) {
		p := r.condemned[i]
		if ok, err := r.c.claimsMatchPolicy(r.update, p); err != nil || ok {
			return err != nil, err
		}
		return false, r.c.fixClaimOwners(ctx, r.key, r.update, p)
	}
	if stop, err := r.forAll(ctx, r.condemned, fixClaims); stop || err != nil {
		return stop, err
	}
	return r.forAll(ctx, r.condemned, r.processCondemned)
}

// forAll calls fn for each pod: in order, stopping at the first that
// says so, when monotonic; in slow-start batches otherwise.
func (r *run) forAll(ctx context.Context, pods []*corev1.Pod, fn func(ctx context.Context, i int) (bool, error)) (bool, error) {
	if r.monotonic {
		for i := range pods {
			if stop, err := fn(ctx, i); stop || err != nil {
				return true, err
			}
		}
		return false, nil
	}
	var next atomic.Int64
	_, err := workload.SlowStart(len(pods), func() error {
		_, err := fn(ctx, int(next.Add(1)-1))
		return err
	})
	return err != nil, err
}

// processReplica handles replica i; true stops an OrderedReady sync.
func (r *run) processReplica(ctx context.Context, i int) (bool, error) {
	c, set, pod := r.c, r.set, r.replicas[i]
	if isTerminal(pod) { // failed or succeeded: delete, recreate once gone
		if pod.DeletionTimestamp == nil {
			if err := c.deletePod(ctx, set, pod); err != nil {
				return true, err
			}
		}
		return true, nil
	}
	if !isCreated(pod) {
		if stale, err := c.claimIsStale(r.update, pod); err != nil || stale {
			return true, err
		}
		if err := c.createPod(ctx, r.key, r.update, pod); err != nil {
			return true, err
		}
		if r.monotonic {
			return true, nil
		}
	}
	if isPending(pod) {
		if err := c.createClaims(ctx, r.key, r.update, pod); err != nil {
			return true, err
		}
		if err := c.fixClaimOwners(ctx, r.key, r.update, pod); err != nil {
			return true, err
		}
	}
	minReady := set.Spec.MinReadySeconds
	if r.monotonic && (isTerminating(pod) || !isRunningAndReady(pod) || !isAvailable(pod, minReady, r.now)) {
		return true, nil // each pod waits for its predecessors
	}
	claimsOK, err := c.claimsMatchPolicy(r.update, pod)
	if err != nil {
		claimsOK = true
	}
	if identityMatches(set, pod) && storageMatches(set, pod) && claimsOK {
		return false, nil
	}
	return false, c.fixPod(ctx, r.key, r.update, pod.DeepCopy(), claimsOK)
}

// processCondemned deletes condemned pod i: in OrderedReady, only once
// every other pod is available (or it is the first unavailable one), and
// one at a time, waiting for termination.
func (r *run) processCondemned(ctx context.Context, i int) (bool, error) {
	pod := r.condemned[i]
	if isTerminating(pod) {
		return r.monotonic, nil
	}
	minReady := r.set.Spec.MinReadySeconds
	if r.monotonic && pod != r.firstUnavailable && (!isRunningAndReady(pod) || !isAvailable(pod, minReady, r.now)) {
		return true, nil
	}
	return true, r.c.deletePod(ctx, r.set, pod)
}

// rollingUpdate deletes pods of an older revision from the highest
// ordinal down to the partition, keeping at most maxUnavailable pods
// unavailable (kube with MaxUnavailableStatefulSet, on in 1.37).
func (r *run) rollingUpdate(ctx context.Context) error {
	set, minReady := r.set, r.set.Spec.MinReadySeconds
	updateMin, maxUnavailable := 0, 1
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		if ru.Partition != nil {
			updateMin = int(*ru.Partition)
		}
		var err error
		if maxUnavailable, err = maxUnavailableOf(ru.MaxUnavailable, replicasOf(set)); err != nil {
			return err
		}
	}
	parallel := set.Spec.PodManagementPolicy == appsv1.ParallelPodManagement
	old := func(p *corev1.Pod) bool { return revisionOf(p) != r.updRev.Name && !isTerminating(p) }
	unavailable, oldUnavailable := 0, 0
	for _, p := range r.replicas {
		if isUnavailable(p, minReady, r.now) {
			unavailable++
			if parallel && old(p) {
				oldUnavailable++
			}
		}
	}
	if unavailable >= maxUnavailable && oldUnavailable == 0 {
		return nil
	}
	del := func(p *corev1.Pod) error {
		if err := r.c.deletePod(ctx, set, p); err != nil {
			return err
		}
		r.status.CurrentReplicas--
		return nil
	}
	budget := maxUnavailable - unavailable
	if parallel { // first the old pods that are unavailable anyway
		for t := len(r.replicas) - 1; t >= updateMin; t-- {
			if p := r.replicas[t]; old(p) && !isAvailable(p, minReady, r.now) {
				if err := del(p); err != nil {
					return err
				}
			}
		}
	}
	for t := len(r.replicas) - 1; t >= updateMin && budget > 0; t-- {
		p := r.replicas[t]
		if !old(p) || (parallel && isUnavailable(p, minReady, r.now)) {
			continue
		}
		if err := del(p); err != nil {
			return err
		}
		budget--
	}
	return nil
}

// maxUnavailableOf is the rolling update's maxUnavailable for replicas
// pods (rounded down, at least 1).
func maxUnavailableOf(v *intstr.IntOrString, replicas int) (int, error) {
	n, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(v, intstr.FromInt32(1)), replicas, false)
	if err != nil {
		return 0, err
	}
	return max(n, 1), nil
}
