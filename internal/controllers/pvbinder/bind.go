package pvbinder

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
)

// bind is kube's bind: the volume's claim reference, its phase, the
// claim's volume name and annotations, its status. Each step writes only
// what differs, so a binding interrupted by a failure is finished by the
// next sync.
func (c *controller) bind(ctx context.Context, volume *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) error {
	out, dirty, err := storagehelpers.GetBindVolumeToClaim(volume, claim)
	if err != nil {
		return err
	}
	if dirty {
		if volume, err = c.client.CoreV1().PersistentVolumes().Update(ctx, out, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	if volume, err = c.volumePhase(ctx, volume, corev1.VolumeBound); err != nil {
		return err
	}
	if claim.Spec.VolumeName != volume.Name || !metav1.HasAnnotation(claim.ObjectMeta, annBindCompleted) {
		out := claim.DeepCopy()
		if out.Spec.VolumeName != volume.Name {
			out.Spec.VolumeName = volume.Name
			metav1.SetMetaDataAnnotation(&out.ObjectMeta, annBoundByController, "yes")
		}
		metav1.SetMetaDataAnnotation(&out.ObjectMeta, annBindCompleted, "yes")
		if claim, err = c.client.CoreV1().PersistentVolumeClaims(claim.Namespace).Update(ctx, out, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	_, err = c.claimPhase(ctx, claim, corev1.ClaimBound, volume)
	return err
}

// claimPhase sets the claim's phase and, bound to volume, its capacity
// and access modes (kube's updateClaimStatus); it writes nothing when
// they are so already.
func (c *controller) claimPhase(ctx context.Context, claim *corev1.PersistentVolumeClaim, phase corev1.PersistentVolumeClaimPhase,
	volume *corev1.PersistentVolume) (*corev1.PersistentVolumeClaim, error) {
	out := claim.DeepCopy()
	out.Status.Phase = phase
	if volume != nil {
		out.Status.AccessModes = volume.Spec.AccessModes
		out.Status.Capacity = corev1.ResourceList{}
		for k, v := range volume.Spec.Capacity {
			out.Status.Capacity[k] = v
		}
	}
	if apiequality.Semantic.DeepEqual(&out.Status, &claim.Status) {
		return claim, nil
	}
	return c.client.CoreV1().PersistentVolumeClaims(claim.Namespace).UpdateStatus(ctx, out, metav1.UpdateOptions{})
}

// volumePhase sets the volume's phase (kube's updateVolumePhase),
// writing nothing when it is so already.
func (c *controller) volumePhase(ctx context.Context, volume *corev1.PersistentVolume, phase corev1.PersistentVolumePhase) (*corev1.PersistentVolume, error) {
	if volume.Status.Phase == phase {
		return volume, nil
	}
	out := volume.DeepCopy()
	c.setPhase(out, phase)
	out.Status.Reason, out.Status.Message = "", ""
	return c.client.CoreV1().PersistentVolumes().UpdateStatus(ctx, out, metav1.UpdateOptions{})
}

// setPhase changes the phase and its transition time.
func (c *controller) setPhase(volume *corev1.PersistentVolume, phase corev1.PersistentVolumePhase) {
	if volume.Status.Phase != phase {
		t := metav1.NewTime(c.now().UTC().Truncate(1e9))
		volume.Status.LastPhaseTransitionTime = &t
	}
	volume.Status.Phase = phase
}
