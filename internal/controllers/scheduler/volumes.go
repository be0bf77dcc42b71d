package scheduler

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	klabels "k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
)

// Volumes: kube's VolumeBinding and VolumeZone plugins for the pods that
// use PersistentVolumeClaims (persistentVolumeClaim or ephemeral
// volumes); a pod without any costs one loop over its volumes.
//
//   - PreFilter: a claim that does not exist (or is being deleted, or is
//     Lost), or an unbound claim whose class binds Immediately (or that
//     names its volume), makes the pod unschedulable everywhere, with
//     kube's messages.
//   - Filter: the volume of every bound claim must exist, the node must
//     satisfy its node affinity ("node(s) didn't match PersistentVolume's
//     node affinity") and its zone and region labels ("node(s) had no
//     available volume zone"); an unbound WaitForFirstConsumer
//     claim the scheduler already chose a node for (annotation
//     volume.kubernetes.io/selected-node) limits the pod to that node; one
//     of a class without a provisioner (kubernetes.io/no-provisioner:
//     static local volumes) to the nodes an Available matching volume
//     allows ("node(s) didn't find available persistent volumes to
//     bind").
//   - An unbound WaitForFirstConsumer claim does not block the decision:
//     the scheduler writes the chosen node on the claim (as kube's
//     VolumeBinding plugin does before provisioning) instead of binding
//     the pod, and binds the pod once the claim is bound (the PV binder or
//     a provisioner binds it to a volume for that node).

const (
	annSelectedNode  = "volume.kubernetes.io/selected-node"
	annBindCompleted = "pv.kubernetes.io/bind-completed"

	reasonVolumeAffinity = "node(s) didn't match PersistentVolume's node affinity"
	reasonNoVolume       = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
	reasonVolumeZone     = "node(s) had no available volume zone"
	reasonSelectedNode   = "node(s) didn't find available persistent volumes to bind"
	msgUnboundImmediate  = "pod has unbound immediate PersistentVolumeClaims"
)

// volumeZoneLabels are the PV labels VolumeZone checks.
var volumeZoneLabels = []string{corev1.LabelTopologyZone, corev1.LabelTopologyRegion,
	corev1.LabelFailureDomainBetaZone, corev1.LabelFailureDomainBetaRegion}

// volumeInfo is what the pod's claims require of a node.
type volumeInfo struct {
	// unresolvable, when set, makes the pod fit nowhere (PreFilter).
	unresolvable string
	// affinity are the bound volumes' required node affinities (each
	// must match).
	affinity [][]nodeTerm
	// zones are the bound volumes' zone labels (key → allowed values).
	zones map[string][]string
	// missingVolume: a bound claim's volume does not exist (yet).
	missingVolume bool
	// selected is the node an unbound WaitForFirstConsumer claim was given.
	selected string
	// waiting are the unbound WaitForFirstConsumer claims (names in the
	// pod's namespace); toSelect those of them without a selected node.
	waiting, toSelect []string
	// static are, for each waiting claim of a class without a provisioner
	// (kubernetes.io/no-provisioner), the node affinities of the volumes
	// that could be bound to it: a node must match one of each.
	static [][][]nodeTerm
}

// noProvisioner is the provisioner of classes of static volumes only.
const noProvisioner = "kubernetes.io/no-provisioner"

// volumeListers read claims, volumes and classes.
type volumeListers struct {
	claims  corelisters.PersistentVolumeClaimLister
	volumes corelisters.PersistentVolumeLister
	classes storagelisters.StorageClassLister
}

// usesClaims tells whether the pod has persistentVolumeClaim or ephemeral
// volumes.
func usesClaims(spec *corev1.PodSpec) bool {
	for i := range spec.Volumes {
		if spec.Volumes[i].PersistentVolumeClaim != nil || spec.Volumes[i].Ephemeral != nil {
			return true
		}
	}
	return false
}

// volumesOf resolves the pod's claims (nil when it has none).
func (l *volumeListers) volumesOf(pod *corev1.Pod) *volumeInfo {
	if l == nil || !usesClaims(&pod.Spec) {
		return nil
	}
	v := &volumeInfo{}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		var name string
		ephemeral := false
		switch {
		case vol.PersistentVolumeClaim != nil:
			name = vol.PersistentVolumeClaim.ClaimName
		case vol.Ephemeral != nil:
			name, ephemeral = pod.Name+"-"+vol.Name, true
		default:
			continue
		}
		if v.unresolvable = l.addClaim(v, pod, name, ephemeral); v.unresolvable != "" {
			return v
		}
	}
	return v
}

// addClaim adds what claim name requires to v, or returns why the pod
// cannot be scheduled.
func (l *volumeListers) addClaim(v *volumeInfo, pod *corev1.Pod, name string, ephemeral bool) string {
	claim, err := l.claims.PersistentVolumeClaims(pod.Namespace).Get(name)
	switch {
	case apierrors.IsNotFound(err) && ephemeral:
		return fmt.Sprintf("waiting for ephemeral volume controller to create the persistentvolumeclaim %q", name)
	case apierrors.IsNotFound(err):
		return fmt.Sprintf("persistentvolumeclaim %q not found", name)
	case err != nil:
		return err.Error()
	case claim.Status.Phase == corev1.ClaimLost:
		return fmt.Sprintf("persistentvolumeclaim %q bound to non-existent persistentvolume %q", claim.Name, claim.Spec.VolumeName)
	case claim.DeletionTimestamp != nil:
		return fmt.Sprintf("persistentvolumeclaim %q is being deleted", name)
	case ephemeral && !metav1.IsControlledBy(claim, pod):
		return fmt.Sprintf("PVC %s/%s was not created for pod %s/%s (pod is not owner)", claim.Namespace, claim.Name, pod.Namespace, pod.Name)
	}
	if claim.Spec.VolumeName != "" && !metav1.HasAnnotation(claim.ObjectMeta, annBindCompleted) {
		return msgUnboundImmediate // pre-bound claims count as immediate, as in kube
	}
	if claim.Spec.VolumeName != "" {
		pv, err := l.volumes.Get(claim.Spec.VolumeName)
		if err != nil {
			v.missingVolume = true
			return ""
		}
		if na := pv.Spec.NodeAffinity; na != nil && na.Required != nil {
			v.affinity = append(v.affinity, selectorTerms(na.Required))
		}
		for _, k := range volumeZoneLabels {
			if val, ok := pv.Labels[k]; ok {
				if v.zones == nil {
					v.zones = make(map[string][]string)
				}
				v.zones[k] = strings.Split(val, "__")
			}
		}
		return ""
	}
	class := l.delayedClass(claim)
	if class == nil {
		return msgUnboundImmediate
	}
	v.waiting = append(v.waiting, claim.Name)
	if n := claim.Annotations[annSelectedNode]; n != "" {
		v.selected = n
		return ""
	}
	v.toSelect = append(v.toSelect, claim.Name)
	if class.Provisioner == noProvisioner {
		v.static = append(v.static, l.staticCandidates(claim))
	}
	return ""
}

// staticCandidates are the node affinities of the volumes that match
// claim but for their node (an empty affinity matches every node).
func (l *volumeListers) staticCandidates(claim *corev1.PersistentVolumeClaim) [][]nodeTerm {
	all, err := l.volumes.List(klabels.Everything())
	if err != nil {
		return nil
	}
	var sel klabels.Selector
	if claim.Spec.Selector != nil {
		if sel, err = metav1.LabelSelectorAsSelector(claim.Spec.Selector); err != nil {
			return nil
		}
	}
	requested := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	out := [][]nodeTerm{}
	for _, pv := range all {
		capacity := pv.Spec.Capacity[corev1.ResourceStorage]
		switch {
		case pv.Status.Phase != corev1.VolumeAvailable || pv.DeletionTimestamp != nil,
			pv.Spec.ClaimRef != nil && !storagehelpers.IsVolumeBoundToClaim(pv, claim),
			storagehelpers.GetPersistentVolumeClass(pv) != storagehelpers.GetPersistentVolumeClaimClass(claim),
			capacity.Cmp(requested) < 0, storagehelpers.CheckVolumeModeMismatches(&claim.Spec, &pv.Spec),
			!storagehelpers.CheckAccessModes(claim, pv), sel != nil && !sel.Matches(klabels.Set(pv.Labels)):
			continue
		}
		var terms []nodeTerm
		if na := pv.Spec.NodeAffinity; na != nil && na.Required != nil {
			terms = selectorTerms(na.Required)
		}
		out = append(out, terms)
	}
	return out
}

// delayedClass returns the claim's class when it binds
// WaitForFirstConsumer, else nil.
func (l *volumeListers) delayedClass(claim *corev1.PersistentVolumeClaim) *storagev1.StorageClass {
	name := storagehelpers.GetPersistentVolumeClaimClass(claim)
	if name == "" {
		return nil
	}
	class, err := l.classes.Get(name)
	if err != nil || class.VolumeBindingMode == nil || *class.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
		return nil
	}
	return class
}

// fits is the Filter part: the reason node does not suit the volumes,
// "" when it does.
func (v *volumeInfo) fits(node *corev1.Node) string {
	if v.missingVolume {
		return reasonNoVolume
	}
	for _, terms := range v.affinity {
		ok := false
		for i := range terms {
			if terms[i].matches(node) {
				ok = true
				break
			}
		}
		if !ok {
			return reasonVolumeAffinity
		}
	}
	for k, allowed := range v.zones {
		val, ok := node.Labels[k]
		if !ok || !contains(allowed, val) {
			return reasonVolumeZone
		}
	}
	if v.selected != "" && v.selected != node.Name {
		return reasonSelectedNode
	}
	for _, candidates := range v.static {
		if !anyMatches(candidates, node) {
			return reasonSelectedNode
		}
	}
	return ""
}

// anyMatches tells whether one of the volumes' affinities admits node.
func anyMatches(candidates [][]nodeTerm, node *corev1.Node) bool {
	for _, terms := range candidates {
		if terms == nil {
			return true
		}
		for i := range terms {
			if terms[i].matches(node) {
				return true
			}
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// waitingClaims are the unbound WaitForFirstConsumer claims (nil-safe).
func (v *volumeInfo) waitingClaims() []string {
	if v == nil {
		return nil
	}
	return v.waiting
}
