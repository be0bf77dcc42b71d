package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/tidwall/gjson"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/litek8s/litek8s/internal/kv"
)

// maxConflictRetries bounds the read-patch attempts of one metadata edit
// before the item goes back to the queue.
const maxConflictRetries = 5

// resourceClient returns the API client of the object at key.
func (g *gc) resourceClient(key kv.Key) (dynamic.ResourceInterface, error) {
	res, ok := g.resource(key.Resource)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotServed, key.Resource)
	}
	if res.Namespaced {
		return g.client.Resource(res.GVR).Namespace(key.Namespace), nil
	}
	return g.client.Resource(res.GVR), nil
}

// deleteObject deletes it with policy, on condition that its uid is still
// it.UID (kube's GarbageCollector.deleteObject). Gone or replaced is done.
func (g *gc) deleteObject(ctx context.Context, it objRef, policy metav1.DeletionPropagation) error {
	c, err := g.resourceClient(it.Key)
	if err != nil {
		return err
	}
	uid := types.UID(it.UID)
	err = c.Delete(ctx, it.Key.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid},
		PropagationPolicy: &policy})
	switch {
	case err == nil:
		g.stats.gcDeletes.Add(1)
		g.log.Debug("deleted", "object", it.Key.String(), "uid", it.UID, "propagation", policy)
		return nil
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return nil
	}
	return err
}

// removeOwnerRefs removes it's references to the owners uids.
func (g *gc) removeOwnerRefs(ctx context.Context, it objRef, uids []string) error {
	removed := 0
	err := g.editMeta(ctx, it, func(raw []byte) (map[string]any, error) {
		refs, err := ownerRefsOf(raw)
		if err != nil {
			return nil, err
		}
		n := len(refs)
		refs = slices.DeleteFunc(refs, func(r metav1.OwnerReference) bool { return slices.Contains(uids, string(r.UID)) })
		if removed = n - len(refs); removed == 0 {
			return nil, nil
		}
		return map[string]any{"ownerReferences": nilIfEmpty(refs)}, nil
	})
	if err == nil {
		g.stats.gcRefsRemoved.Add(uint64(removed))
	}
	return err
}

// unblockOwnerRefs sets blockOwnerDeletion=false on it's references to
// the owners uids.
func (g *gc) unblockOwnerRefs(ctx context.Context, it objRef, uids []string) error {
	return g.editMeta(ctx, it, func(raw []byte) (map[string]any, error) {
		refs, err := ownerRefsOf(raw)
		if err != nil {
			return nil, err
		}
		changed := false
		for i := range refs {
			r := &refs[i]
			if slices.Contains(uids, string(r.UID)) && r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion {
				r.BlockOwnerDeletion = new(false)
				changed = true
			}
		}
		if !changed {
			return nil, nil
		}
		return map[string]any{"ownerReferences": refs}, nil
	})
}

// removeFinalizer removes finalizer from it (kube's removeFinalizer): the
// last finalizer gone, the API deletes the object.
func (g *gc) removeFinalizer(ctx context.Context, it objRef, finalizer string) error {
	removed := false
	err := g.editMeta(ctx, it, func(raw []byte) (map[string]any, error) {
		var fins []string
		gjson.GetBytes(raw, "metadata.finalizers").ForEach(func(_, f gjson.Result) bool {
			if f.Str != finalizer {
				fins = append(fins, f.Str)
			}
			removed = removed || f.Str == finalizer
			return true
		})
		if !removed {
			return nil, nil
		}
		return map[string]any{"finalizers": nilIfEmpty(fins)}, nil
	})
	if err == nil && removed {
		g.stats.gcFinalizersRemoved.Add(1)
		g.log.Debug("removed finalizer", "object", it.Key.String(), "finalizer", finalizer)
	}
	return err
}

// editMeta reads it from the store and asks edit for the metadata fields
// to change (none: nothing to do), then writes them as a JSON merge patch
// with the object's resourceVersion as precondition; it reads again when
// the object changed in between. An object gone or replaced needs no edit.
func (g *gc) editMeta(ctx context.Context, it objRef, edit func(raw []byte) (map[string]any, error)) error {
	c, err := g.resourceClient(it.Key)
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		cur, _, err := g.store.Get(ctx, it.Key, false)
		switch {
		case errors.Is(err, kv.ErrNotFound):
			return nil
		case err != nil:
			return err
		case cur.UID != it.UID:
			return nil
		}
		fields, err := edit(cur.Raw)
		if err != nil || fields == nil {
			return err
		}
		fields["resourceVersion"] = strconv.FormatUint(cur.RV, 10)
		patch, err := json.Marshal(map[string]any{"metadata": fields})
		if err != nil {
			return err
		}
		_, err = c.Patch(ctx, it.Key.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		switch {
		case err == nil, apierrors.IsNotFound(err):
			return nil
		case apierrors.IsConflict(err) && attempt < maxConflictRetries:
			continue
		}
		return err
	}
}

// ownerRefsOf decodes the ownerReferences of a stored object.
func ownerRefsOf(raw []byte) ([]metav1.OwnerReference, error) {
	var refs []metav1.OwnerReference
	if r := gjson.GetBytes(raw, "metadata.ownerReferences"); r.Exists() {
		if err := json.Unmarshal([]byte(r.Raw), &refs); err != nil {
			return nil, fmt.Errorf("controllers: ownerReferences: %w", err)
		}
	}
	return refs, nil
}

// nilIfEmpty makes an empty list null, which a merge patch removes.
func nilIfEmpty[T any](s []T) any {
	if len(s) == 0 {
		return nil
	}
	return s
}
