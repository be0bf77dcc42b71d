package controllers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ownerState is what the live lookup of one owner found (kube's
// classifyReferences).
type ownerState uint8

const (
	// ownerSolid: the owner exists and is not deleting its dependents in
	// the foreground (being deleted otherwise still counts as solid).
	ownerSolid ownerState = iota
	// ownerDangling: no object of that kind, namespace and name has the
	// referenced uid: the owner is gone (or never existed there).
	ownerDangling
	// ownerWaiting: the owner is being deleted in the foreground and
	// waits for its dependents.
	ownerWaiting
)

// actionKind is what the garbage collector does to a dependent.
type actionKind uint8

const (
	actNone actionKind = iota
	// actRemoveRefs: remove the references to Owners (dangling, or
	// waiting) and keep the object, which has a solid owner.
	actRemoveRefs
	// actDelete: delete the object with Policy, after setting
	// blockOwnerDeletion=false on the references to Unblock.
	actDelete
)

// action is the garbage collector's decision about one dependent.
type action struct {
	Kind    actionKind
	Policy  metav1.DeletionPropagation
	Owners  []string // actRemoveRefs: the owner uids whose references go
	Unblock []string // actDelete: the owner uids whose references stop blocking
}

// decide is kube's attemptToDeleteItem for an object that is not being
// deleted, given the state of each of its owners (states[i] for
// m.owners[i]), whether it has dependents, and whether one of those is
// itself deleting its dependents in the foreground.
//
//   - An object with a solid owner stays; its references to dangling and
//     waiting owners are removed (so a foreground deletion does not wait
//     for an object it does not delete).
//   - An object with no solid owner and an owner waiting for it, that has
//     dependents of its own, is deleted in the foreground (its own
//     dependents go first). If one of those dependents also deletes in the
//     foreground the object's blocking references are unblocked first, as
//     kube breaks such cycles.
//   - Otherwise (every owner dangling, or waiting with no dependents) the
//     object is deleted, with the policy its own finalizers ask for
//     (orphan, foreground) or else in the background.
func decide(m objMeta, states []ownerState, hasDependents, dependentDeletingDependents bool) action {
	var solid, dangling, waiting []string
	for i, s := range states {
		uid := m.owners[i].UID
		switch s {
		case ownerSolid:
			solid = append(solid, uid)
		case ownerDangling:
			dangling = append(dangling, uid)
		case ownerWaiting:
			waiting = append(waiting, uid)
		}
	}
	switch {
	case len(m.owners) == 0:
		return action{}
	case len(solid) > 0:
		if len(dangling) == 0 && len(waiting) == 0 {
			return action{}
		}
		return action{Kind: actRemoveRefs, Owners: append(dangling, waiting...)}
	case len(waiting) > 0 && hasDependents:
		a := action{Kind: actDelete, Policy: metav1.DeletePropagationForeground}
		if dependentDeletingDependents {
			for _, r := range m.owners {
				if r.Block {
					a.Unblock = append(a.Unblock, r.UID)
				}
			}
		}
		return a
	}
	a := action{Kind: actDelete, Policy: metav1.DeletePropagationBackground}
	switch {
	case m.orphan:
		a.Policy = metav1.DeletePropagationOrphan
	case m.foreground:
		a.Policy = metav1.DeletePropagationForeground
	}
	return a
}
