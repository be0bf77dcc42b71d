package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
)

// pods/eviction: a POST of a policy/v1 Eviction deletes the pod (with the
// Eviction's deleteOptions) unless that would violate its
// PodDisruptionBudget, as kube's EvictionREST does: a pod that is not
// running (or already being deleted) is deleted at once; a pod with one
// PDB is deleted only when the PDB's status allows a disruption, which is
// then spent (status.disruptionsAllowed decremented, the pod recorded in
// status.disruptedPods for the disruption controller); otherwise 429 with
// a DisruptionTarget cause. The pod gets kube's DisruptionTarget condition
// before it is deleted.

// evictionRow describes policy/v1 Eviction for decoding.
var evictionRow = &registry.Resource{Group: "policy", Version: "v1", Resource: "evictions", Kind: "Eviction",
	New: func() runtime.Object { return &policyv1.Eviction{} }}

var evictionGK = schema.GroupKind{Group: "policy", Kind: "Eviction"}

// maxDisruptedPods is kube's MaxDisruptedPodSize.
const maxDisruptedPods = 2000

// evict serves POST /api/v1/namespaces/{ns}/pods/{name}/eviction.
func (s *Server) evict(w http.ResponseWriter, r *http.Request, q *request) error {
	return serveWrite(s, w, r, parseCreateOptions, func(opts *writeOptions, ws *warnings) (*writeResult, error) {
		obj, err := s.decodePosted(r, q, evictionRow, opts, ws)
		if err != nil {
			return nil, err
		}
		ev := obj.(*policyv1.Eviction)
		if d := ev.DeleteOptions; d != nil && d.IgnoreStoreReadErrorWithClusterBreakingPotential != nil &&
			*d.IgnoreStoreReadErrorWithClusterBreakingPotential {
			return nil, apierrors.NewInvalid(evictionGK, q.name, field.ErrorList{field.Invalid(
				field.NewPath("deleteOptions").Child("ignoreStoreReadErrorWithClusterBreakingPotential"), true,
				"can not be set for pod eviction, try after removing the option")})
		}
		var dryRun []string
		if opts.dryRun {
			dryRun = []string{metav1.DryRunAll}
		}
		del, err := evictionDeleteOptions(ev, dryRun)
		if err != nil {
			return nil, err
		}
		if err := s.evictPod(r.Context(), q, del); err != nil {
			if apierrors.IsTooManyRequests(err) {
				s.metrics.refuse(refusedDisruptionBudget)
			}
			return nil, err
		}
		return createdStatus()
	})
}

// evictionDeleteOptions is kube's propagateDryRun: the Eviction's
// deleteOptions, with the request's dryRun.
func evictionDeleteOptions(ev *policyv1.Eviction, dryRun []string) (*metav1.DeleteOptions, error) {
	if ev.DeleteOptions == nil {
		return &metav1.DeleteOptions{DryRun: dryRun}, nil
	}
	d := ev.DeleteOptions.DeepCopy()
	switch {
	case len(d.DryRun) == 0:
		d.DryRun = dryRun
	case len(dryRun) > 0 && !reflect.DeepEqual(dryRun, d.DryRun):
		return nil, fmt.Errorf("Non-matching dry-run options in request and content: %v and %v", dryRun, d.DryRun)
	}
	return d, nil
}

// evictPod is kube's EvictionREST.Create after decoding.
func (s *Server) evictPod(ctx context.Context, q *request, del *metav1.DeleteOptions) error {
	var pod *corev1.Pod
	for attempt := 0; ; attempt++ {
		var err error
		if pod, err = getTyped[corev1.Pod](ctx, s, q.res, q.namespace, q.name); err != nil {
			return err
		}
		if !canIgnorePDB(pod) {
			break
		}
		d := del
		if rvUnset(del) && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed &&
			pod.DeletionTimestamp == nil {
			d = withRV(del, pod.ResourceVersion) // a pod that started meanwhile is not deleted unchecked
		}
		err = s.markAndDeletePod(ctx, q, d)
		// kube retries a pod that changed meanwhile, unless the client
		// gave its own resourceVersion.
		if !apierrors.IsConflict(err) || !rvUnset(del) || attempt >= maxConflictRetries {
			return err
		}
	}
	pdbs, err := s.podDisruptionBudgets(ctx, pod)
	if err != nil {
		return err
	}
	switch {
	case len(pdbs) > 1:
		return statusErr(http.StatusInternalServerError, "",
			"This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.", nil)
	case len(pdbs) == 0:
		return s.markAndDeletePod(ctx, q, del)
	}
	pdb := pdbs[0]
	if !podReady(pod) {
		alwaysAllow := pdb.Spec.UnhealthyPodEvictionPolicy != nil && *pdb.Spec.UnhealthyPodEvictionPolicy == policyv1.AlwaysAllow
		if alwaysAllow || (pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0) {
			// An unhealthy pod goes without spending the budget, if it
			// is still the pod that was checked.
			err := s.markAndDeletePod(ctx, q, withRV(del, pod.ResourceVersion))
			if apierrors.IsConflict(err) && rvUnset(del) {
				return tooManyRequests(pdb.Name)
			}
			return err
		}
	}
	if err := s.spendDisruption(ctx, pod, pdb.Name, len(del.DryRun) > 0); err != nil {
		return err
	}
	return s.markAndDeletePod(ctx, q, del)
}

// canIgnorePDB: a pod that is not running or is already being deleted
// is evicted without consulting its budget.
func canIgnorePDB(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed, corev1.PodPending:
		return true
	}
	return pod.DeletionTimestamp != nil
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func rvUnset(d *metav1.DeleteOptions) bool {
	return d.Preconditions == nil || d.Preconditions.ResourceVersion == nil
}

func withRV(d *metav1.DeleteOptions, rv string) *metav1.DeleteOptions {
	d = d.DeepCopy()
	if d.Preconditions == nil {
		d.Preconditions = &metav1.Preconditions{}
	}
	d.Preconditions.ResourceVersion = &rv
	return d
}

// podDisruptionBudgets are the PDBs of pod's namespace that select it.
func (s *Server) podDisruptionBudgets(ctx context.Context, pod *corev1.Pod) ([]*policyv1.PodDisruptionBudget, error) {
	res := s.registry().Lookup("policy/v1", "poddisruptionbudgets")
	if res == nil {
		return nil, nil
	}
	l, err := s.store.List(ctx, res.StoreKey(), pod.Namespace, false)
	if err != nil {
		return nil, availabilityErr(err)
	}
	var out []*policyv1.PodDisruptionBudget
	var derr error
	l.Range("", func(obj *kv.Object) bool {
		pdb := &policyv1.PodDisruptionBudget{}
		if derr = json.Unmarshal(obj.Raw, pdb); derr != nil {
			return false
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err == nil && sel.Matches(labels.Set(pod.Labels)) {
			out = append(out, pdb)
		}
		return true
	})
	return out, derr
}

// spendDisruption is kube's checkAndDecrement on the stored PDB: a dry
// run checks only.
func (s *Server) spendDisruption(ctx context.Context, pod *corev1.Pod, name string, dryRun bool) error {
	res := s.registry().Lookup("policy/v1", "poddisruptionbudgets")
	q := &request{res: res, namespace: pod.Namespace, name: name, subresource: "status"}
	u := &mutation{q: q, opts: &writeOptions{dryRun: dryRun}, ws: &warnings{},
		desired: func(old runtime.Object, _ *kv.Object) (runtime.Object, error) {
			pdb := old.(*policyv1.PodDisruptionBudget)
			if err := checkDisruption(pdb); err != nil {
				return nil, err
			}
			pdb.Status.DisruptionsAllowed--
			if pdb.Status.DisruptionsAllowed == 0 {
				updateDisruptionAllowedCondition(pdb)
			}
			if pdb.Status.DisruptedPods == nil {
				pdb.Status.DisruptedPods = map[string]metav1.Time{}
			}
			pdb.Status.DisruptedPods[pod.Name] = metav1.NewTime(s.cfg.Now())
			return pdb, nil
		}}
	_, err := s.guaranteedUpdate(ctx, u)
	if apierrors.IsConflict(err) {
		return apierrors.NewTimeoutError(fmt.Sprintf("couldn't update PodDisruptionBudget %q due to conflicts", name), 10)
	}
	return err
}

// checkDisruption tells whether pdb allows one more disruption (kube's
// checkAndDecrement, with its messages).
func checkDisruption(pdb *policyv1.PodDisruptionBudget) error {
	forbidden := func(reason, msg string) error {
		err := apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}, pdb.Name, errors.New(reason))
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes,
			metav1.StatusCause{Type: policyv1.DisruptionBudgetCause, Message: msg})
		return err
	}
	switch {
	case pdb.Status.ObservedGeneration < pdb.Generation:
		return tooManyRequests(pdb.Name)
	case pdb.Status.DisruptionsAllowed < 0:
		return forbidden("pdb disruptions allowed is negative", fmt.Sprintf(
			"The disruption budget %s does not allow evicting pods currently: pdb disruptions allowed is negative", pdb.Name))
	case len(pdb.Status.DisruptedPods) > maxDisruptedPods:
		return forbidden("DisruptedPods map too big - too many evictions not confirmed by PDB controller", fmt.Sprintf(
			"The disruption budget %s does not allow evicting pods currently: too many pending evictions not confirmed by PDB controller", pdb.Name))
	case pdb.Status.DisruptionsAllowed > 0:
		return nil
	}
	err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
	cond := apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
	var msg string
	switch {
	case cond != nil && cond.Status == metav1.ConditionFalse && cond.Message != "" && cond.Reason == policyv1.SyncFailedReason:
		msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently because it failed sync: %s", pdb.Name, cond.Message)
	case pdb.Status.CurrentHealthy <= pdb.Status.DesiredHealthy:
		msg = fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name,
			pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy)
	case cond != nil && cond.Status == metav1.ConditionFalse && cond.Message != "":
		msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently (%s): %s", pdb.Name, cond.Reason, cond.Message)
	default:
		msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently", pdb.Name)
	}
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes,
		metav1.StatusCause{Type: policyv1.DisruptionBudgetCause, Message: msg})
	return err
}

// tooManyRequests is kube's answer while a PDB was not processed yet.
func tooManyRequests(name string) error {
	err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 10)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type: policyv1.DisruptionBudgetCause, Message: fmt.Sprintf("The disruption budget %s is still being processed by the server.", name)})
	return err
}

// updateDisruptionAllowedCondition is component-helpers'
// UpdateDisruptionAllowedCondition.
func updateDisruptionAllowedCondition(pdb *policyv1.PodDisruptionBudget) {
	c := metav1.Condition{Type: policyv1.DisruptionAllowedCondition, Reason: policyv1.InsufficientPodsReason,
		Status: metav1.ConditionFalse, ObservedGeneration: pdb.Status.ObservedGeneration}
	if pdb.Status.DisruptionsAllowed > 0 {
		c.Reason, c.Status = policyv1.SufficientPodsReason, metav1.ConditionTrue
	}
	apimeta.SetStatusCondition(&pdb.Status.Conditions, c)
}

// markAndDeletePod is kube's addConditionAndDeletePod: the pod gets the
// DisruptionTarget condition (checked against del's preconditions), then
// it is deleted with del.
func (s *Server) markAndDeletePod(ctx context.Context, q *request, del *metav1.DeleteOptions) error {
	if len(del.DryRun) == 0 {
		sq := &request{res: q.res, namespace: q.namespace, name: q.name, subresource: "status"}
		u := &mutation{q: sq, opts: &writeOptions{}, ws: &warnings{},
			desired: func(old runtime.Object, cur *kv.Object) (runtime.Object, error) {
				pod := old.(*corev1.Pod)
				if p := del.Preconditions; p != nil {
					if p.UID != nil && *p.UID != "" && *p.UID != pod.UID {
						return nil, apierrors.NewConflict(schema.GroupResource{Resource: "Pod"}, pod.Name, fmt.Errorf(
							"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated",
							*p.UID, pod.UID))
					}
					if p.ResourceVersion != nil && *p.ResourceVersion != "" && *p.ResourceVersion != pod.ResourceVersion {
						return nil, apierrors.NewConflict(schema.GroupResource{Resource: "Pod"}, pod.Name, fmt.Errorf(
							"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified",
							*p.ResourceVersion, pod.ResourceVersion))
					}
				}
				updatePodCondition(&pod.Status, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
					Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting"}, s.cfg.Now())
				return pod, nil
			}}
		res, err := s.guaranteedUpdate(ctx, u)
		if err != nil {
			return err
		}
		if !rvUnset(del) {
			var m metav1.PartialObjectMetadata
			if err := json.Unmarshal(res.raw, &m); err != nil {
				return err
			}
			del = withRV(del, m.ResourceVersion)
		}
	}
	_, err := s.deleteObject(ctx, &request{res: q.res, namespace: q.namespace, name: q.name}, del)
	return err
}
