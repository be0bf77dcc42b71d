package disruption

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/cache"
	pdbhelper "k8s.io/component-helpers/apps/poddisruptionbudget"
)

// sync computes one budget's status; a failure other than a conflict
// leaves it allowing no disruption (kube's failSafe) and is retried.
func (c *controller) sync(ctx context.Context, key string) error {
	if strings.HasPrefix(key, podPrefix) {
		return c.syncStalePod(ctx, key)
	}
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	pdb, err := c.pdbs.PodDisruptionBudgets(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	err = c.trySync(ctx, pdb)
	if err == nil || apierrors.IsConflict(err) || apierrors.IsNotFound(err) || ctx.Err() != nil {
		return err
	}
	if ferr := c.failSafe(ctx, pdb, err); ferr != nil {
		return ferr
	}
	return err
}

func (c *controller) trySync(ctx context.Context, pdb *policyv1.PodDisruptionBudget) error {
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		c.events.Eventf(pdb, corev1.EventTypeWarning, "NoPods", "Failed to get pods: %v", err)
		return err
	}
	pods, err := c.pods.Pods(pdb.Namespace).List(sel)
	if err != nil {
		return err
	}
	if len(pods) == 0 {
		c.events.Event(pdb, corev1.EventTypeNormal, "NoPods", "No matching pods found")
	}
	expected, desired, unmanaged, err := c.expectedPodCount(pdb, pods)
	if err != nil {
		c.events.Eventf(pdb, corev1.EventTypeWarning, "CalculateExpectedPodCountFailed", "Failed to calculate the number of expected pods: %v", err)
		return err
	}
	if unmanaged > 0 {
		c.events.Eventf(pdb, corev1.EventTypeWarning, "UnmanagedPods", "Pods selected by this PodDisruptionBudget (selector: %v) were found "+
			"to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. "+
			"To account for these pods please set \".spec.minAvailable\" field of the PDB to an integer value.", pdb.Spec.Selector)
	}
	now := c.now()
	disrupted, recheck := c.disruptedPods(pods, pdb, now)
	healthy := c.countHealthy(pods, disrupted, now)
	if err := c.updateStatus(ctx, pdb, healthy, desired, expected, disrupted); err != nil {
		return err
	}
	if recheck != nil {
		c.loop.Queue.AddAfter(pdb.Namespace+"/"+pdb.Name, recheck.Sub(now))
	}
	return nil
}

// expectedPodCount is kube's getExpectedPodCount; unmanaged counts the
// pods without a controller that a scale-based budget leaves out.
func (c *controller) expectedPodCount(pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod) (expected, desired int32, unmanaged int, err error) {
	switch {
	case pdb.Spec.MaxUnavailable != nil:
		if expected, unmanaged, err = c.expectedScale(pods); err != nil {
			return 0, 0, 0, err
		}
		maxUnavailable, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, int(expected), true)
		if err != nil {
			return 0, 0, 0, err
		}
		desired = max(expected-int32(maxUnavailable), 0)
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == intstr.Int:
		desired, expected = pdb.Spec.MinAvailable.IntVal, int32(len(pods))
	case pdb.Spec.MinAvailable != nil:
		if expected, unmanaged, err = c.expectedScale(pods); err != nil {
			return 0, 0, 0, err
		}
		minAvailable, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, int(expected), true)
		if err != nil {
			return 0, 0, 0, err
		}
		desired = int32(minAvailable)
	}
	return expected, desired, unmanaged, nil
}

// disruptedPods is kube's buildDisruptedPodMap: the recorded evictions
// of pods that still exist, are not being deleted and are within
// DeletionTimeout; recheck is when the first of them expires.
func (c *controller) disruptedPods(pods []*corev1.Pod, pdb *policyv1.PodDisruptionBudget, now time.Time) (map[string]metav1.Time, *time.Time) {
	out := make(map[string]metav1.Time)
	var recheck *time.Time
	if pdb.Status.DisruptedPods == nil {
		return out, nil
	}
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		at, ok := pdb.Status.DisruptedPods[pod.Name]
		if !ok {
			continue
		}
		expires := at.Add(c.cfg.DeletionTimeout)
		if expires.Before(now) {
			c.events.Eventf(pod, corev1.EventTypeWarning, "NotDeleted", "Pod was expected by PDB %s/%s to be deleted but it wasn't",
				pdb.Namespace, pdb.Name)
			continue
		}
		if recheck == nil || expires.Before(*recheck) {
			recheck = &expires
		}
		out[pod.Name] = at
	}
	return out, recheck
}

// countHealthy is kube's countHealthyPods.
func (c *controller) countHealthy(pods []*corev1.Pod, disrupted map[string]metav1.Time, now time.Time) int32 {
	var n int32
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		if at, ok := disrupted[pod.Name]; ok && at.Add(c.cfg.DeletionTimeout).After(now) {
			continue
		}
		if ready(pod) {
			n++
		}
	}
	return n
}

func ready(pod *corev1.Pod) bool {
	for _, cond := range pod.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// updateStatus writes the computed status when it differs (kube's
// updatePdbStatus).
func (c *controller) updateStatus(ctx context.Context, pdb *policyv1.PodDisruptionBudget, healthy, desired, expected int32,
	disrupted map[string]metav1.Time) error {
	allowed := healthy - desired
	if expected <= 0 || allowed <= 0 {
		allowed = 0
	}
	st := &pdb.Status
	if st.CurrentHealthy == healthy && st.DesiredHealthy == desired && st.ExpectedPods == expected &&
		st.DisruptionsAllowed == allowed && apiequality.Semantic.DeepEqual(st.DisruptedPods, disrupted) &&
		st.ObservedGeneration == pdb.Generation && pdbhelper.ConditionsAreUpToDate(pdb) {
		return nil
	}
	out := pdb.DeepCopy()
	out.Status = policyv1.PodDisruptionBudgetStatus{CurrentHealthy: healthy, DesiredHealthy: desired, ExpectedPods: expected,
		DisruptionsAllowed: allowed, DisruptedPods: disrupted, ObservedGeneration: pdb.Generation, Conditions: out.Status.Conditions}
	pdbhelper.UpdateDisruptionAllowedCondition(out)
	_, err := c.client.PolicyV1().PodDisruptionBudgets(pdb.Namespace).UpdateStatus(ctx, out, metav1.UpdateOptions{})
	return err
}

// failSafe is kube's: no disruption allowed, condition SyncFailed with
// the error.
func (c *controller) failSafe(ctx context.Context, pdb *policyv1.PodDisruptionBudget, cause error) error {
	out := pdb.DeepCopy()
	out.Status.DisruptionsAllowed = 0
	if out.Status.Conditions == nil {
		out.Status.Conditions = []metav1.Condition{}
	}
	apimeta.SetStatusCondition(&out.Status.Conditions, metav1.Condition{Type: policyv1.DisruptionAllowedCondition,
		Status: metav1.ConditionFalse, Reason: policyv1.SyncFailedReason, Message: cause.Error(),
		ObservedGeneration: out.Status.ObservedGeneration})
	if apiequality.Semantic.DeepEqual(&out.Status, &pdb.Status) {
		return nil
	}
	_, err := c.client.PolicyV1().PodDisruptionBudgets(pdb.Namespace).UpdateStatus(ctx, out, metav1.UpdateOptions{})
	return err
}
