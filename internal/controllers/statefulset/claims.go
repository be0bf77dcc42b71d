package statefulset

import (
	"context"
	"errors"
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The claims of a set's pods and their owners. As kube's, the owner
// references of a claim follow persistentVolumeClaimRetentionPolicy:
//
//	whenScaled Retain, whenDeleted Retain: none of the set or the pod
//	whenScaled Retain, whenDeleted Delete: the set (controller)
//	whenScaled Delete, whenDeleted Retain: the pod, once scaled down
//	whenScaled Delete, whenDeleted Delete: the set; the pod instead once
//	                                        scaled down
//
// and the garbage collector deletes the claims with their owner. A claim
// with a stale reference (same name, other uid) or another controller is
// left alone.

const (
	retain = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	del    = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
)

func retention(set *appsv1.StatefulSet) appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy {
	p := appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: retain, WhenScaled: retain}
	if set.Spec.PersistentVolumeClaimRetentionPolicy != nil {
		p = *set.Spec.PersistentVolumeClaimRetentionPolicy
	}
	return p
}

// claimsFor are the claims of pod's ordinal, from set's templates, in
// template order.
func claimsFor(set *appsv1.StatefulSet, pod *corev1.Pod) []*corev1.PersistentVolumeClaim {
	o := ordinalOf(pod)
	out := make([]*corev1.PersistentVolumeClaim, 0, len(set.Spec.VolumeClaimTemplates))
	for i := range set.Spec.VolumeClaimTemplates {
		c := set.Spec.VolumeClaimTemplates[i].DeepCopy()
		c.Name, c.Namespace = claimName(set, &set.Spec.VolumeClaimTemplates[i], o), set.Namespace
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		if set.Spec.Selector != nil {
			maps.Copy(c.Labels, set.Spec.Selector.MatchLabels)
		}
		c.Status = corev1.PersistentVolumeClaimStatus{}
		out = append(out, c)
	}
	return out
}

// createClaims creates pod's missing claims; a claim being deleted is an
// error (the pod must wait for a new one).
func (c *controller) createClaims(ctx context.Context, key string, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	var errs []error
	for _, claim := range claimsFor(set, pod) {
		cur, err := c.claims.PersistentVolumeClaims(claim.Namespace).Get(claim.Name)
		switch {
		case apierrors.IsNotFound(err):
			setClaimOwners(claim, set, pod)
			created, err := c.client.CoreV1().PersistentVolumeClaims(claim.Namespace).Create(ctx, claim, metav1.CreateOptions{})
			if err != nil {
				if !apierrors.IsAlreadyExists(err) {
					c.claimEvent("create", set, pod, claim.Name, err)
				}
				errs = append(errs, fmt.Errorf("failed to create PVC %s: %w", claim.Name, err))
				continue
			}
			c.written.wrote(key, claimsResource, created.ResourceVersion)
			c.claimEvent("create", set, pod, claim.Name, nil)
		case err != nil:
			errs = append(errs, fmt.Errorf("failed to retrieve PVC %s: %w", claim.Name, err))
		case cur.DeletionTimestamp != nil:
			errs = append(errs, fmt.Errorf("pvc %s is being deleted", claim.Name))
		}
	}
	return errors.Join(errs...)
}

// claimsMatchPolicy reports whether the owners of pod's existing claims
// follow the retention policy.
func (c *controller) claimsMatchPolicy(set *appsv1.StatefulSet, pod *corev1.Pod) (bool, error) {
	for _, want := range claimsFor(set, pod) {
		claim, err := c.claims.PersistentVolumeClaims(want.Namespace).Get(want.Name)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return false, err
		case !ownersUpToDate(claim, set, pod):
			return false, nil
		}
	}
	return true, nil
}

// fixClaimOwners updates the owners of pod's claims to the retention
// policy.
func (c *controller) fixClaimOwners(ctx context.Context, key string, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	for _, want := range claimsFor(set, pod) {
		claim, err := c.claims.PersistentVolumeClaims(want.Namespace).Get(want.Name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if unexpectedController(claim, set, pod) {
			c.events.Eventf(set, corev1.EventTypeWarning, "ConflictingController",
				"PersistentVolumeClaim %s has a conflicting OwnerReference that acts as a manging controller, the retention policy is ignored for this claim", claim.Name)
		}
		if ownersUpToDate(claim, set, pod) {
			continue
		}
		claim = claim.DeepCopy()
		setClaimOwners(claim, set, pod)
		updated, err := c.client.CoreV1().PersistentVolumeClaims(claim.Namespace).Update(ctx, claim, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("could not update claim %s for delete policy ownerRefs: %w", claim.Name, err)
		}
		c.written.wrote(key, claimsResource, updated.ResourceVersion)
	}
	return nil
}

// claimIsStale reports whether a claim of pod (not created yet) still
// belongs to an earlier pod of its name that is to delete it (whenScaled
// Delete): the pod waits for the garbage collector.
func (c *controller) claimIsStale(set *appsv1.StatefulSet, pod *corev1.Pod) (bool, error) {
	if retention(set).WhenScaled == retain {
		return false, nil
	}
	for _, want := range claimsFor(set, pod) {
		claim, err := c.claims.PersistentVolumeClaims(want.Namespace).Get(want.Name)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return false, err
		case staleRef(claim, pod, podKind):
			return true, nil
		}
	}
	return false, nil
}

func refersTo(ref *metav1.OwnerReference, obj metav1.Object, gvk schema.GroupVersionKind) bool {
	return ref.APIVersion == gvk.GroupVersion().String() && ref.Kind == gvk.Kind && ref.Name == obj.GetName()
}

// staleRef: claim refers to obj's name and kind with another uid.
func staleRef(claim *corev1.PersistentVolumeClaim, obj metav1.Object, gvk schema.GroupVersionKind) bool {
	for i := range claim.OwnerReferences {
		if r := &claim.OwnerReferences[i]; refersTo(r, obj, gvk) {
			return r.UID != obj.GetUID()
		}
	}
	return false
}

func hasRef(claim *corev1.PersistentVolumeClaim, owner metav1.Object) bool {
	for _, r := range claim.OwnerReferences {
		if r.UID == owner.GetUID() {
			return true
		}
	}
	return false
}

// unexpectedController: under a Delete policy, claim is controlled by
// something other than set and pod (or by an earlier set or pod).
func unexpectedController(claim *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	if p := retention(set); p.WhenScaled == retain && p.WhenDeleted == retain {
		return false
	}
	for i := range claim.OwnerReferences {
		r := &claim.OwnerReferences[i]
		switch {
		case refersTo(r, set, kind):
			if r.UID != set.UID {
				return true
			}
		case refersTo(r, pod, podKind):
			if r.UID != pod.UID {
				return true
			}
		case r.Controller != nil && *r.Controller:
			return true
		}
	}
	return false
}

// ownersUpToDate reports whether claim's references to set and pod follow
// the policy (a claim with stale references is left alone: true).
func ownersUpToDate(claim *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	if staleRef(claim, set, kind) || staleRef(claim, pod, podKind) {
		return true
	}
	if unexpectedController(claim, set, pod) {
		return !hasRef(claim, set) && !hasRef(claim, pod)
	}
	for _, r := range claim.OwnerReferences {
		if (r.UID == set.UID || r.UID == pod.UID) && (r.Controller == nil || !*r.Controller) {
			return false
		}
	}
	wantSet, wantPod := wantedOwners(set, pod)
	return hasRef(claim, set) == wantSet && hasRef(claim, pod) == wantPod
}

// wantedOwners: whether the policy wants set, and pod, to own pod's
// claims.
func wantedOwners(set *appsv1.StatefulSet, pod *corev1.Pod) (wantSet, wantPod bool) {
	p := retention(set)
	scaledDown := !inRange(set, pod)
	switch {
	case p.WhenScaled == retain && p.WhenDeleted == del:
		return true, false
	case p.WhenScaled == del && p.WhenDeleted == retain:
		return false, scaledDown
	case p.WhenScaled == del && p.WhenDeleted == del:
		return !scaledDown, scaledDown
	}
	return false, false // Retain/Retain, or a policy unknown: Retain
}

// setClaimOwners rewrites claim's references to set and pod to the
// policy's.
func setClaimOwners(claim *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, pod *corev1.Pod) {
	unexpected := unexpectedController(claim, set, pod)
	refs := make([]metav1.OwnerReference, 0, len(claim.OwnerReferences)+1)
	for i := range claim.OwnerReferences {
		if r := &claim.OwnerReferences[i]; !refersTo(r, set, kind) && !refersTo(r, pod, podKind) {
			refs = append(refs, *r)
		}
	}
	if !unexpected {
		wantSet, wantPod := wantedOwners(set, pod)
		if wantSet {
			refs = append(refs, *metav1.NewControllerRef(set, kind))
		}
		if wantPod && pod.UID != "" {
			refs = append(refs, *metav1.NewControllerRef(pod, podKind))
		}
	}
	if len(refs) == 0 {
		refs = nil
	}
	claim.OwnerReferences = refs
}
