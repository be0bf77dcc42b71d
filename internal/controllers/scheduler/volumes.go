package scheduler

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
)

// Volumes: kube's VolumeBinding and VolumeZone plugins for the pods that
// use PersistentVolumeClaims (persistentVolumeClaim or ephemeral
// volumes); a pod without any costs one loop over its volumes.
//
//   - PreFilter: a claim that does not exist (or is being deleted), or an
//     unbound claim whose class binds Immediately, makes the pod
//     unschedulable everywhere, with kube's messages.
//   - Filter: the node must satisfy the node affinity of every bound
//     claim's PersistentVolume ("node(s) had volume node affinity
//     conflict") and the zone and region labels of those volumes ("node(s)
//     had no available volume zone"); an unbound WaitForFirstConsumer
//     claim the scheduler already chose a node for (annotation
//     volume.kubernetes.io/selected-node) limits the pod to that node.
//   - An unbound WaitForFirstConsumer claim does not block the decision:
//     the scheduler writes the chosen node on the claim (as kube's
//     VolumeBinding plugin does before provisioning) instead of binding
//     the pod, and binds the pod once the claim is bound (the PV binder or
//     a provisioner binds it to a volume for that node).

const (
	annSelectedNode  = "volume.kubernetes.io/selected-node"
	annBindCompleted = "pv.kubernetes.io/bind-completed"

	reasonVolumeAffinity = "node(s) had volume node affinity conflict"
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
	// selected is the node an unbound WaitForFirstConsumer claim was given.
	selected string
	// waiting are the unbound WaitForFirstConsumer claims (names in the
	// pod's namespace); toSelect those of them without a selected node.
	waiting, toSelect []string
}

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
	case claim.DeletionTimestamp != nil:
		return fmt.Sprintf("persistentvolumeclaim %q is being deleted", name)
	case ephemeral && !metav1.IsControlledBy(claim, pod):
		return fmt.Sprintf("PVC %s/%s was not created for pod %s/%s (pod is not owner)", claim.Namespace, claim.Name, pod.Namespace, pod.Name)
	}
	if claim.Spec.VolumeName != "" && metav1.HasAnnotation(claim.ObjectMeta, annBindCompleted) {
		pv, err := l.volumes.Get(claim.Spec.VolumeName)
		if err != nil {
			return fmt.Sprintf("pvc %s/%s bound to non-existent pv %s", claim.Namespace, claim.Name, claim.Spec.VolumeName)
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
	if !l.delayed(claim) {
		return msgUnboundImmediate
	}
	v.waiting = append(v.waiting, claim.Name)
	if n := claim.Annotations[annSelectedNode]; n != "" {
		v.selected = n
	} else {
		v.toSelect = append(v.toSelect, claim.Name)
	}
	return ""
}

// delayed tells whether the claim's class binds WaitForFirstConsumer.
func (l *volumeListers) delayed(claim *corev1.PersistentVolumeClaim) bool {
	name := ""
	if claim.Spec.StorageClassName != nil {
		name = *claim.Spec.StorageClassName
	} else if a, ok := claim.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		name = a
	}
	if name == "" {
		return false
	}
	class, err := l.classes.Get(name)
	return err == nil && class.VolumeBindingMode != nil && *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer
}

// fits is the Filter part: the reason node does not suit the volumes,
// "" when it does.
func (v *volumeInfo) fits(node *corev1.Node) string {
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
	return ""
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
