package pvbinder

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

// Annotations kube's PV controller, scheduler and provisioners share.
const (
	annBindCompleted          = storagehelpers.AnnBindCompleted
	annBoundByController      = storagehelpers.AnnBoundByController
	annSelectedNode           = storagehelpers.AnnSelectedNode
	annStorageProvisioner     = storagehelpers.AnnStorageProvisioner
	annBetaStorageProvisioner = storagehelpers.AnnBetaStorageProvisioner
	annDynamicallyProvisioned = storagehelpers.AnnDynamicallyProvisioned
)

// Event reasons, as kube's PV controller words them.
const (
	reasonFailedBinding         = "FailedBinding"
	reasonVolumeMismatch        = "VolumeMismatch"
	reasonWaitForFirstConsumer  = "WaitForFirstConsumer"
	reasonExternalProvisioning  = "ExternalProvisioning"
	reasonProvisioningFailed    = "ProvisioningFailed"
	reasonClaimLost             = "ClaimLost"
	reasonClaimMisbound         = "ClaimMisbound"
	reasonVolumeFailedRecycle   = "VolumeFailedRecycle"
	reasonVolumeFailedDelete    = "VolumeFailedDelete"
	reasonVolumeUnknownReclaim  = "VolumeUnknownReclaimPolicy"
	reasonExternalVolumeDeleter = "VolumeDelete"
)

func (c *controller) syncClaimKey(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	claim, err := c.claims.PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !metav1.HasAnnotation(claim.ObjectMeta, annBindCompleted) {
		return c.syncUnboundClaim(ctx, claim)
	}
	return c.syncBoundClaim(ctx, claim)
}

// syncUnboundClaim binds a claim that never completed its binding.
func (c *controller) syncUnboundClaim(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	if claim.DeletionTimestamp != nil { // a volume bound now would only be released
		return nil
	}
	if claim.Spec.VolumeName != "" {
		return c.syncPreboundClaim(ctx, claim)
	}
	className := storagehelpers.GetPersistentVolumeClaimClass(claim)
	class, err := c.class(className)
	if err != nil {
		return err
	}
	waitForConsumer := class != nil && class.VolumeBindingMode != nil &&
		*class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer
	delay := waitForConsumer && !storagehelpers.IsDelayBindingProvisioning(claim)
	var node *corev1.Node
	if waitForConsumer && !delay { // match the volumes against the node the scheduler chose
		if node, err = c.nodes.Get(claim.Annotations[annSelectedNode]); apierrors.IsNotFound(err) {
			node = nil
		} else if err != nil {
			return err
		}
	}
	volume, err := c.bestMatch(claim, node, delay)
	if err != nil {
		return err
	}
	if volume != nil {
		return c.bind(ctx, volume, claim)
	}
	switch {
	case delay:
		c.events.Event(claim, corev1.EventTypeNormal, reasonWaitForFirstConsumer, "waiting for first consumer to be created before binding")
	case className != "":
		if claim, err = c.provision(ctx, claim, className, class); err != nil {
			return err
		}
	default:
		c.events.Event(claim, corev1.EventTypeNormal, reasonFailedBinding, "no persistent volumes available for this claim and no storage class is set")
	}
	_, err = c.claimPhase(ctx, claim, corev1.ClaimPending, nil)
	return err
}

// class returns the named StorageClass, nil when there is none.
func (c *controller) class(name string) (*storagev1.StorageClass, error) {
	if name == "" {
		return nil, nil
	}
	class, err := c.classes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return class, err
}

// bestMatch is kube's findBestMatchForClaim: the volumes offering every
// access mode the claim asks for, matched by FindMatchingVolume.
func (c *controller) bestMatch(claim *corev1.PersistentVolumeClaim, node *corev1.Node, delay bool) (*corev1.PersistentVolume, error) {
	all, err := c.volumes.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	vols := all[:0:0]
	for _, v := range all {
		if storagehelpers.CheckAccessModes(claim, v) {
			vols = append(vols, v)
		}
	}
	return storagehelpers.FindMatchingVolume(claim, vols, node, nil, delay, true)
}

// provision asks the class's external provisioner for a volume by
// annotating the claim (returned as written); in-tree provisioners are
// not available.
func (c *controller) provision(ctx context.Context, claim *corev1.PersistentVolumeClaim, className string,
	class *storagev1.StorageClass) (*corev1.PersistentVolumeClaim, error) {
	if class == nil {
		msg := fmt.Sprintf("storageclass.storage.k8s.io %q not found", className)
		c.events.Event(claim, corev1.EventTypeWarning, reasonProvisioningFailed, msg)
		return claim, nil
	}
	p := class.Provisioner
	if strings.HasPrefix(p, "kubernetes.io/") {
		c.events.Event(claim, corev1.EventTypeWarning, reasonProvisioningFailed, "no volume plugin matched name: "+p)
		return claim, nil
	}
	if claim.Annotations[annStorageProvisioner] != p || claim.Annotations[annBetaStorageProvisioner] != p {
		out := claim.DeepCopy()
		metav1.SetMetaDataAnnotation(&out.ObjectMeta, annStorageProvisioner, p)
		metav1.SetMetaDataAnnotation(&out.ObjectMeta, annBetaStorageProvisioner, p)
		updated, err := c.client.CoreV1().PersistentVolumeClaims(claim.Namespace).Update(ctx, out, metav1.UpdateOptions{})
		if err != nil {
			return nil, err
		}
		claim = updated
	}
	c.events.Event(claim, corev1.EventTypeNormal, reasonExternalProvisioning, fmt.Sprintf(
		"Waiting for a volume to be created either by the external provisioner '%s' or manually by the system administrator. "+
			"If volume creation is delayed, please verify that the provisioner is running and correctly registered.", p))
	return claim, nil
}

// syncPreboundClaim binds a claim that names its volume.
func (c *controller) syncPreboundClaim(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	volume, err := c.volumes.Get(claim.Spec.VolumeName)
	if apierrors.IsNotFound(err) { // retried at the next resync, or when the volume appears
		_, err = c.claimPhase(ctx, claim, corev1.ClaimPending, nil)
		return err
	}
	if err != nil {
		return err
	}
	switch {
	case volume.Spec.ClaimRef == nil:
		if err := satisfies(volume, claim); err != nil {
			c.events.Event(claim, corev1.EventTypeWarning, reasonVolumeMismatch,
				fmt.Sprintf("Cannot bind to requested volume %q: %s", volume.Name, err))
			_, err = c.claimPhase(ctx, claim, corev1.ClaimPending, nil)
			return err
		}
		return c.bind(ctx, volume, claim)
	case storagehelpers.IsVolumeBoundToClaim(volume, claim):
		return c.bind(ctx, volume, claim)
	}
	c.events.Event(claim, corev1.EventTypeWarning, reasonFailedBinding, fmt.Sprintf("volume %q already bound to a different claim.", volume.Name))
	if metav1.HasAnnotation(claim.ObjectMeta, annBoundByController) {
		return fmt.Errorf("pvbinder: invalid binding of claim %s/%s to volume %q: volume already claimed by %s/%s",
			claim.Namespace, claim.Name, volume.Name, volume.Spec.ClaimRef.Namespace, volume.Spec.ClaimRef.Name)
	}
	_, err = c.claimPhase(ctx, claim, corev1.ClaimPending, nil)
	return err
}

// satisfies is kube's checkVolumeSatisfyClaim.
func satisfies(volume *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) error {
	requested := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	capacity := volume.Spec.Capacity[corev1.ResourceStorage]
	switch {
	case volume.DeletionTimestamp != nil:
		return fmt.Errorf("the volume is marked for deletion %q", volume.Name)
	case capacity.Cmp(requested) < 0:
		return errors.New("requested PV is too small")
	case storagehelpers.GetPersistentVolumeClass(volume) != storagehelpers.GetPersistentVolumeClaimClass(claim):
		return errors.New("storageClassName does not match")
	case ptr.Deref(volume.Spec.VolumeAttributesClassName, "") != ptr.Deref(claim.Spec.VolumeAttributesClassName, ""):
		return errors.New("volumeAttributesClassName does not match")
	case storagehelpers.CheckVolumeModeMismatches(&claim.Spec, &volume.Spec):
		return errors.New("incompatible volumeMode")
	case !storagehelpers.CheckAccessModes(claim, volume):
		return errors.New("incompatible accessMode")
	}
	return nil
}

// syncBoundClaim keeps a bound claim bound, or marks it Lost.
func (c *controller) syncBoundClaim(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	if claim.Spec.VolumeName == "" {
		return c.lose(ctx, claim, reasonClaimLost, "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!")
	}
	volume, err := c.volumes.Get(claim.Spec.VolumeName)
	if apierrors.IsNotFound(err) {
		return c.lose(ctx, claim, reasonClaimLost, "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
	}
	if err != nil {
		return err
	}
	if volume.Spec.ClaimRef == nil || volume.Spec.ClaimRef.UID == claim.UID {
		return c.bind(ctx, volume, claim)
	}
	return c.lose(ctx, claim, reasonClaimMisbound, "Two claims are bound to the same volume, this one is bound incorrectly")
}

// lose marks claim Lost with a warning event.
func (c *controller) lose(ctx context.Context, claim *corev1.PersistentVolumeClaim, reason, msg string) error {
	if claim.Status.Phase == corev1.ClaimLost {
		return nil
	}
	updated, err := c.claimPhase(ctx, claim, corev1.ClaimLost, nil)
	if err == nil {
		c.events.Event(updated, corev1.EventTypeWarning, reason, msg)
	}
	return err
}
