package pvbinder

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func (c *controller) syncVolumeKey(ctx context.Context, name string) error {
	volume, err := c.volumes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return c.syncVolume(ctx, volume)
}

// syncVolume is kube's syncVolume: the phase of a volume follows its
// claim reference.
func (c *controller) syncVolume(ctx context.Context, volume *corev1.PersistentVolume) error {
	ref := volume.Spec.ClaimRef
	if ref == nil || ref.UID == "" { // free, or reserved for a claim whose sync binds it
		_, err := c.volumePhase(ctx, volume, corev1.VolumeAvailable)
		return err
	}
	claim, err := c.claimOf(ctx, volume)
	if err != nil {
		return err
	}
	switch {
	case claim == nil:
		return c.release(ctx, volume)
	case claim.Spec.VolumeName == "":
		// Bound (or pre-bound by a provisioner) to a claim not bound yet:
		// the claim's sync finishes the binding.
		c.loop.Queue.Add(claimPrefix + claim.Namespace + "/" + claim.Name)
		return nil
	case claim.Spec.VolumeName == volume.Name:
		_, err := c.volumePhase(ctx, volume, corev1.VolumeBound)
		return err
	case metav1.HasAnnotation(volume.ObjectMeta, annDynamicallyProvisioned) &&
		volume.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimDelete:
		// Provisioned for a claim that got another volume.
		return c.release(ctx, volume)
	}
	return c.unbind(ctx, volume) // its claim went to another volume
}

// claimOf returns the claim the volume is bound to, nil when it is gone
// (or replaced by another of the same name). A claim missing from the
// cache is looked up live before its volume is released.
func (c *controller) claimOf(ctx context.Context, volume *corev1.PersistentVolume) (*corev1.PersistentVolumeClaim, error) {
	ref := volume.Spec.ClaimRef
	claim, err := c.claims.PersistentVolumeClaims(ref.Namespace).Get(ref.Name)
	if apierrors.IsNotFound(err) && volume.Status.Phase != corev1.VolumeReleased && volume.Status.Phase != corev1.VolumeFailed {
		claim, err = c.client.CoreV1().PersistentVolumeClaims(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if claim.UID != ref.UID {
		return nil, nil
	}
	return claim, nil
}

// release marks a volume whose claim is gone Released and applies its
// reclaim policy.
func (c *controller) release(ctx context.Context, volume *corev1.PersistentVolume) error {
	if volume.Status.Phase != corev1.VolumeReleased && volume.Status.Phase != corev1.VolumeFailed {
		var err error
		if volume, err = c.volumePhase(ctx, volume, corev1.VolumeReleased); err != nil {
			return err
		}
	}
	switch volume.Spec.PersistentVolumeReclaimPolicy {
	case corev1.PersistentVolumeReclaimRetain:
		return nil
	case corev1.PersistentVolumeReclaimRecycle:
		return c.fail(ctx, volume, reasonVolumeFailedRecycle, "Recycle is not supported: no recycler plugin found for the volume!")
	case corev1.PersistentVolumeReclaimDelete:
		if p := volume.Annotations[annDynamicallyProvisioned]; p != "" {
			// The external provisioner deletes what it provisioned.
			c.events.Event(volume, corev1.EventTypeNormal, reasonExternalVolumeDeleter,
				fmt.Sprintf("waiting for a volume to be deleted, either by external provisioner %q or manually deleted by system administrator", p))
			return nil
		}
		return c.fail(ctx, volume, reasonVolumeFailedDelete,
			fmt.Sprintf("error getting deleter volume plugin for volume %q: no deletable volume plugin matched", volume.Name))
	}
	return c.fail(ctx, volume, reasonVolumeUnknownReclaim, "Volume has unrecognized PersistentVolumeReclaimPolicy")
}

// fail marks volume Failed with a warning event (once).
func (c *controller) fail(ctx context.Context, volume *corev1.PersistentVolume, reason, msg string) error {
	if volume.Status.Phase == corev1.VolumeFailed && volume.Status.Reason == reason {
		return nil
	}
	out := volume.DeepCopy()
	c.setPhase(out, corev1.VolumeFailed)
	out.Status.Reason, out.Status.Message = reason, msg
	updated, err := c.client.CoreV1().PersistentVolumes().UpdateStatus(ctx, out, metav1.UpdateOptions{})
	if err == nil {
		c.events.Event(updated, corev1.EventTypeWarning, reason, msg)
	}
	return err
}

// unbind frees a volume whose claim is bound elsewhere: one the
// controller bound loses its claim reference, one a user pre-bound keeps
// it without the uid.
func (c *controller) unbind(ctx context.Context, volume *corev1.PersistentVolume) error {
	out := volume.DeepCopy()
	if metav1.HasAnnotation(volume.ObjectMeta, annBoundByController) {
		out.Spec.ClaimRef = nil
		delete(out.Annotations, annBoundByController)
	} else {
		out.Spec.ClaimRef.UID = ""
	}
	updated, err := c.client.CoreV1().PersistentVolumes().Update(ctx, out, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	_, err = c.volumePhase(ctx, updated, corev1.VolumeAvailable)
	return err
}
