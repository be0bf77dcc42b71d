// Package pvbinder is the binding part of kube's PersistentVolume
// controller ("persistentvolume-binder"): it binds PersistentVolumeClaims
// to PersistentVolumes and keeps the phases of both.
//
//   - A Pending claim without spec.volumeName is bound to the volume
//     pre-bound to it (spec.claimRef naming it, as an external provisioner
//     creates), else to the smallest Available volume that matches its
//     storage class, access modes, size, volume mode and selector
//     (component-helpers' FindMatchingVolume, kube's own matcher). Node
//     affinity is ignored for Immediate binding; a claim of a
//     WaitForFirstConsumer class waits for the scheduler's
//     volume.kubernetes.io/selected-node annotation and is then matched
//     against that node.
//   - A claim with spec.volumeName binds to that volume when it fits.
//   - Binding sets the volume's spec.claimRef (with the claim's uid) and
//     annotation pv.kubernetes.io/bound-by-controller, the claim's
//     spec.volumeName and pv.kubernetes.io/bind-completed, the phases
//     (volume Bound, claim Bound with the volume's capacity and access
//     modes).
//   - No match and a class whose provisioner is not in-tree (no
//     "kubernetes.io/" prefix): the claim gets the annotations
//     volume.kubernetes.io/storage-provisioner and
//     volume.beta.kubernetes.io/storage-provisioner so that the external
//     provisioner creates a volume pre-bound to it, which is then bound.
//   - A volume whose claim is gone is Released; reclaim policy Retain
//     keeps it so, Delete leaves a provisioned volume to its provisioner
//     (and fails any other: litek8s deletes no storage), Recycle is not
//     supported (Failed, with an event). A bound claim whose volume is
//     gone is Lost.
//
// The finalizers that keep claims and volumes in use are the
// volumeprotection controllers'; the default StorageClass of a claim is
// set by the API's admission.
//
// Concurrency: one queue of keys ("claim/<ns>/<name>", "volume/<name>")
// served by Config.Workers goroutines (1 by default, as kube's single
// claim and volume workers: a claim and a volume are never written by two
// goroutines at once); informer handlers only enqueue; every
// Config.Resync every claim and volume is queued again (kube's
// --pvclaimbinder-sync-period). Writes carry the cached resourceVersion,
// so a decision taken on a stale cache fails with a conflict and is
// retried. Run returns once every goroutine it started has returned.
package pvbinder
