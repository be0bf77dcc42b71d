// Package volumeprotection owns the finalizers that keep storage objects
// in use from disappearing: kube's "pvc-protection-controller" and
// "pv-protection-controller".
//
// litek8s's API adds kubernetes.io/pvc-protection to every new
// PersistentVolumeClaim and kubernetes.io/pv-protection to every new
// PersistentVolume (kube's StorageObjectInUseProtection admission), so
// without these controllers a deleted claim or volume would stay
// Terminating forever.
//
//   - A claim being deleted loses its finalizer once no pod uses it: a
//     pod uses a claim when it is bound to a node (spec.nodeName) and
//     names the claim in a persistentVolumeClaim volume, or in an
//     ephemeral volume whose claim it owns, as long as the pod is not
//     shut down (deleted with no grace period left), as in kube. The
//     informer's answer "unused" is confirmed by a live list of the
//     namespace's pods, since a pod created just now may not be in the
//     cache yet.
//   - A volume being deleted loses its finalizer once it is not Bound.
//   - An object not being deleted that lacks its finalizer gets it back.
//
// Concurrency: each controller's Run owns its workers and queue and
// returns when all have stopped; an object is processed by one worker at
// a time.
package volumeprotection
