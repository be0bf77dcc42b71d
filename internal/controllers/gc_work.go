package controllers

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/kv"
)

// errClusterScopedDependent: a cluster-scoped object names a namespaced
// owner, which kube treats as unresolvable (never collected, not retried).
var errClusterScopedDependent = errors.New("controllers: cluster-scoped object with a namespaced owner")

// attemptToDelete looks at one object that may have to go (kube's
// attemptToDeleteItem), on its live state: it reads the object with a
// consistent read (which also fails on a member that lost leadership),
// then each owner by name and uid as of that read.
func (g *gc) attemptToDelete(ctx context.Context, it objRef) error {
	cur, _, err := g.store.Get(ctx, it.Key, true)
	switch {
	case errors.Is(err, kv.ErrNotFound):
		return nil // gone: its deletion event looks at its dependents
	case err != nil:
		return err
	case cur.UID != it.UID:
		return nil
	}
	m := parseMeta(cur.Raw)
	switch {
	case m.deletingDependents():
		return g.processDeletingDependents(ctx, it)
	case m.deleting, len(m.owners) == 0:
		return nil // being deleted is a one-way trip; no owners, no garbage
	}
	states, err := g.classify(ctx, it.Key.Namespace, m.owners)
	if errors.Is(err, errClusterScopedDependent) {
		g.log.Info("cluster-scoped object refers to a namespaced owner: not collected", "object", it.Key.String())
		return nil
	}
	if err != nil {
		return err
	}
	deps := g.graph.dependentsOf(it.UID)
	deletingDeps := false
	for _, d := range deps {
		deletingDeps = deletingDeps || d.deletingDependents
	}
	a := decide(m, states, len(deps) > 0, deletingDeps)
	switch a.Kind {
	case actRemoveRefs:
		return g.removeOwnerRefs(ctx, it, a.Owners)
	case actDelete:
		if len(a.Unblock) > 0 {
			if err := g.unblockOwnerRefs(ctx, it, a.Unblock); err != nil {
				return err
			}
		}
		return g.deleteObject(ctx, it, a.Policy)
	}
	return nil
}

// classify looks up each owner (kube's classifyReferences): it must be in
// the dependent's namespace (or cluster-scoped) with the referenced name
// and uid.
func (g *gc) classify(ctx context.Context, namespace string, owners []ownerRef) ([]ownerState, error) {
	states := make([]ownerState, len(owners))
	for i, r := range owners {
		res, ok := g.kind(r.groupKind())
		if !ok {
			return nil, fmt.Errorf("%w: %s %s", ErrUnknownKind, r.APIVersion, r.Kind)
		}
		key := kv.Key{Resource: res.StoreKey, Name: r.Name}
		if res.Namespaced {
			if namespace == "" {
				return nil, errClusterScopedDependent
			}
			key.Namespace = namespace
		}
		obj, _, err := g.store.Get(ctx, key, false) // as of the consistent read of the dependent
		switch {
		case errors.Is(err, kv.ErrNotFound):
			states[i] = ownerDangling
		case err != nil:
			return nil, err
		case obj.UID != r.UID:
			states[i] = ownerDangling
		case parseMeta(obj.Raw).deletingDependents():
			states[i] = ownerWaiting
		default:
			states[i] = ownerSolid
		}
	}
	return states, nil
}

// processDeletingDependents finishes a foreground deletion (kube's
// processDeletingDependentsItem): while the owner has blocking dependents
// it has them deleted (those not deleting in the foreground themselves);
// when none is left it removes the foregroundDeletion finalizer, which
// deletes the owner. A dependent's deletion event brings the owner back.
func (g *gc) processDeletingDependents(ctx context.Context, it objRef) error {
	blocking := 0
	for _, d := range g.graph.dependentsOf(it.UID) {
		if !d.block {
			continue
		}
		blocking++
		if !d.deletingDependents {
			g.deleteQ.Add(d.ref)
		}
	}
	if blocking > 0 {
		return nil
	}
	return g.removeFinalizer(ctx, it, metav1.FinalizerDeleteDependents)
}

// attemptToOrphan orphans the dependents of an owner deleted with the
// orphan finalizer (kube's attemptToOrphanWorker): it removes the
// reference to the owner from each, then the owner's finalizer, which
// deletes it.
func (g *gc) attemptToOrphan(ctx context.Context, it objRef) error {
	cur, _, err := g.store.Get(ctx, it.Key, true)
	switch {
	case errors.Is(err, kv.ErrNotFound):
		return nil
	case err != nil:
		return err
	case cur.UID != it.UID:
		return nil
	}
	if m := parseMeta(cur.Raw); !m.deleting || !m.orphan {
		return nil
	}
	for _, d := range g.graph.dependentsOf(it.UID) {
		if err := g.removeOwnerRefs(ctx, d.ref, []string{it.UID}); err != nil {
			return err
		}
	}
	return g.removeFinalizer(ctx, it, metav1.FinalizerOrphanDependents)
}
