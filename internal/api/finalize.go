package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
)

// Deletion as kube's generic registry (Store.Delete) does it:
//
//   - An object with finalizers is not removed: it gets deletionTimestamp
//     (now) and deletionGracePeriodSeconds 0 and stays until an update
//     removes its last finalizer, which then deletes it (see
//     shouldDeleteDuringUpdate). A second DELETE changes nothing.
//   - propagationPolicy Orphan and Foreground (and the deprecated
//     orphanDependents) add the garbage collector's finalizers "orphan" and
//     "foregroundDeletion"; Background removes them. litek8s has no garbage
//     collector yet (issue 5): such objects stay, marked, until a
//     controller or a user removes the finalizer.
//   - Pods are deleted gracefully: a pod bound to a node gets
//     deletionTimestamp = now + its grace period (30 s by default) and stays
//     Terminating until its kubelet, once the containers stopped, sends the
//     final DELETE with gracePeriodSeconds=0 (simulated nodes' kubelet:
//     internal/controllers/simnode), or a force delete, or the pod GC
//     (internal/controllers/podgc) when its node is gone. As in kube,
//     nothing deletes it when the grace period ends. A pod not bound to a
//     node, or finished, or deleted with gracePeriodSeconds=0, goes at once
//     (after a write that marks it, as in kube).
//   - A Namespace is marked Terminating; the namespace controller empties
//     it and then finalizes it, which removes it (namespace.go).
//
// The answer is the object when it stays (200), and a Success Status when
// it is gone, except for the kinds kube answers with the deleted object.

// returnsDeletedObject are the resources (store keys) whose DELETE answers
// the deleted object instead of a Status (kube's ReturnDeletedObject).
var returnsDeletedObject = map[string]bool{
	"pods": true, "services": true, "namespaces": true, "serviceaccounts": true, "persistentvolumes": true,
	"persistentvolumeclaims": true, "resourcequotas": true, "podtemplates": true,
	"storageclasses.storage.k8s.io": true, "csidrivers.storage.k8s.io": true, "csinodes.storage.k8s.io": true,
	"volumeattachments.storage.k8s.io": true, "volumeattributesclasses.storage.k8s.io": true,
	"resourceclaims.resource.k8s.io": true, "resourceclaimtemplates.resource.k8s.io": true,
	"resourceslices.resource.k8s.io": true, "deviceclasses.resource.k8s.io": true,
}

// gracefulDelete decides the grace period of resources deleted gracefully
// (kube's CheckGracefulDelete): it sets opts.GracePeriodSeconds and
// reports whether the deletion is graceful at all.
var gracefulDelete = map[string]func(obj runtime.Object, opts *metav1.DeleteOptions) bool{
	"pods": podGracePeriod,
}

// podGracePeriod is the pod strategy's CheckGracefulDelete.
func podGracePeriod(obj runtime.Object, opts *metav1.DeleteOptions) bool {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return false
	}
	var period int64
	switch {
	case opts.GracePeriodSeconds != nil:
		period = *opts.GracePeriodSeconds
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		period = *pod.Spec.TerminationGracePeriodSeconds
	}
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		period = 0 // not scheduled, or already terminated: delete at once
	}
	opts.GracePeriodSeconds = &period
	return true
}

// deleteResult is what a delete answers.
type deleteResult struct {
	raw     []byte // the object, or nil for a Success Status
	deleted bool   // the object is gone
	uid     string
}

// deleteObject deletes the object of q (see the rules above), retrying
// when it changes in between.
func (s *Server) deleteObject(ctx context.Context, q *request, opts *metav1.DeleteOptions) (*deleteResult, error) {
	for range maxConflictRetries {
		cur, _, err := s.store.Get(ctx, q.key(), false)
		if err != nil {
			return nil, storeErr(err, q.res, q.name)
		}
		o := *opts // each attempt starts from the request's options
		var res *deleteResult
		if q.res.StoreKey() == "namespaces" {
			res, err = s.deleteNamespaceOnce(ctx, q, &o, cur)
		} else {
			res, err = s.deleteOnce(ctx, q, &o, cur)
		}
		if errors.Is(err, errRetry) {
			continue
		}
		return res, err
	}
	return nil, storeErr(kv.ErrConflict, q.res, q.name)
}

// deleteOnce is one attempt of kube's Store.Delete on the stored cur.
func (s *Server) deleteOnce(ctx context.Context, q *request, opts *metav1.DeleteOptions, cur *kv.Object) (*deleteResult, error) {
	if err := checkDeletePreconditions(q, opts, cur); err != nil {
		return nil, err
	}
	obj, err := decodeStored(q.res, cur)
	if err != nil {
		return nil, err
	}
	if err := s.admitDelete(ctx, q, obj, opts); err != nil {
		return nil, err
	}
	m, err := apimeta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	now := s.cfg.Now()
	graceful, pending := beforeDelete(q.res, obj, m, opts, now)
	if pending { // a graceful deletion is under way: nothing to change
		return s.deletedAnswer(q, cur.Raw, false, cur.UID), nil
	}
	pendingFinalizers := len(m.GetFinalizers()) > 0
	gcChanged, finalizers := gcFinalizers(m, opts)
	last := cur.Raw // the object's state before it goes
	lastRV := cur.RV
	if graceful || pendingFinalizers || gcChanged {
		m.SetFinalizers(finalizers)
		pendingFinalizers = len(finalizers) > 0
		if graceful || pendingFinalizers {
			if !graceful {
				markAsDeleting(m, now)
			}
			raw, stored, err := s.writeDeletionMark(ctx, q, obj, cur, opts)
			if err != nil {
				return nil, err
			}
			if pendingFinalizers || graceful && *opts.GracePeriodSeconds > 0 {
				return &deleteResult{raw: raw, uid: cur.UID}, nil
			}
			last = raw // graceful with no grace left: delete now
			if stored != nil {
				lastRV = stored.RV
			}
		}
	}
	if len(opts.DryRun) > 0 {
		return s.deletedAnswer(q, last, true, cur.UID), nil
	}
	if q.res.StoreKey() == crdStoreKey {
		if err := s.deleteCustomObjects(ctx, cur); err != nil {
			return nil, err
		}
	}
	_, err = s.store.Propose(ctx, kv.Write{Op: kv.OpDelete, Key: q.key(), ExpectedRV: lastRV})
	switch {
	case errors.Is(err, kv.ErrConflict):
		return nil, errRetry
	case errors.Is(err, kv.ErrNotFound) && lastRV != cur.RV:
		// deleted by someone else right after our mark: kube ignores that
	case err != nil:
		return nil, storeErr(err, q.res, q.name)
	}
	return s.deletedAnswer(q, last, true, cur.UID), nil
}

// writeDeletionMark stores obj (cur with the deletion fields and
// finalizers set) unless nothing changed; under dryRun it stores nothing.
// It returns the object's bytes and the stored object (nil when nothing
// was written).
func (s *Server) writeDeletionMark(ctx context.Context, q *request, obj runtime.Object, cur *kv.Object, opts *metav1.DeleteOptions) ([]byte, *kv.Object, error) {
	raw, err := encode(obj)
	if err != nil {
		return nil, nil, err
	}
	if string(raw) == string(cur.Raw) || len(opts.DryRun) > 0 {
		return raw, nil, nil
	}
	stored, err := s.store.Propose(ctx, kv.Write{Op: kv.OpUpdate, Key: q.key(), ExpectedRV: cur.RV, Object: raw})
	if errors.Is(err, kv.ErrConflict) {
		return nil, nil, errRetry
	}
	if err != nil {
		return nil, nil, storeErr(err, q.res, q.name)
	}
	return stored.Raw, stored, nil
}

// deletedAnswer is the answer of a completed (or pending graceful)
// deletion: the object for the kinds that return it, else Success.
func (s *Server) deletedAnswer(q *request, raw []byte, deleted bool, uid string) *deleteResult {
	if returnsDeletedObject[q.res.StoreKey()] {
		return &deleteResult{raw: raw, deleted: deleted, uid: uid}
	}
	return &deleteResult{deleted: deleted, uid: uid}
}

// checkDeletePreconditions words a failed uid or resourceVersion
// precondition like kube (the Kind, not the resource, in the message).
func checkDeletePreconditions(q *request, opts *metav1.DeleteOptions, cur *kv.Object) error {
	p := opts.Preconditions
	if p == nil {
		return nil
	}
	gr := schema.GroupResource{Group: q.res.Group, Resource: q.res.Kind}
	if p.UID != nil && string(*p.UID) != cur.UID {
		return apierrors.NewConflict(gr, q.name, fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, cur.UID))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != formatRV(cur.RV) {
		return apierrors.NewConflict(gr, q.name, fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%d). The object might have been modified", *p.ResourceVersion, cur.RV))
	}
	return nil
}

// beforeDelete is kube's rest.BeforeDelete: for kinds deleted gracefully
// it sets the deletion timestamp and grace period on obj (graceful), or
// reports that a graceful deletion is already pending.
func beforeDelete(res *registry.Resource, obj runtime.Object, m metav1.Object, opts *metav1.DeleteOptions, now time.Time) (graceful, pending bool) {
	one := int64(1)
	if g := opts.GracePeriodSeconds; g != nil && *g < 0 {
		opts.GracePeriodSeconds = &one
	}
	if g := m.GetDeletionGracePeriodSeconds(); g != nil && *g < 0 {
		m.SetDeletionGracePeriodSeconds(&one)
	}
	check := gracefulDelete[res.StoreKey()]
	if check == nil {
		return false, false
	}
	if ts := m.GetDeletionTimestamp(); ts != nil {
		g := m.GetDeletionGracePeriodSeconds()
		if g == nil || *g == 0 {
			return false, false
		}
		if opts.GracePeriodSeconds == nil {
			opts.GracePeriodSeconds = g
			return false, true
		}
		period := *opts.GracePeriodSeconds
		if period >= *g {
			return false, true
		}
		// Only a shorter grace period may be asked for.
		newTS := ts.Add(-time.Duration(*g) * time.Second).Add(time.Duration(period) * time.Second)
		if newTS.Before(now) {
			newTS = now
			if period != 0 {
				period = 1
			}
		}
		t := metav1.NewTime(newTS)
		m.SetDeletionTimestamp(&t)
		m.SetDeletionGracePeriodSeconds(&period)
		opts.GracePeriodSeconds = &period
		return true, false
	}
	if !check(obj, opts) {
		return false, false
	}
	t := metav1.NewTime(now.Add(time.Duration(*opts.GracePeriodSeconds) * time.Second))
	m.SetDeletionTimestamp(&t)
	m.SetDeletionGracePeriodSeconds(opts.GracePeriodSeconds)
	if m.GetGeneration() > 0 {
		m.SetGeneration(m.GetGeneration() + 1)
	}
	return true, false
}

// markAsDeleting marks an object whose finalizers keep it: deletionTimestamp
// now (unless an earlier one is set), grace period 0, generation bumped on
// the first mark.
func markAsDeleting(m metav1.Object, now time.Time) {
	ts := m.GetDeletionTimestamp()
	if ts == nil && m.GetGeneration() > 0 {
		m.SetGeneration(m.GetGeneration() + 1)
	}
	if ts == nil || ts.After(now) {
		t := metav1.NewTime(now)
		m.SetDeletionTimestamp(&t)
	}
	var zero int64
	m.SetDeletionGracePeriodSeconds(&zero)
}

// gcFinalizers returns the finalizers m gets from the propagation policy
// (kube's deletionFinalizersForGarbageCollection) and whether they changed.
func gcFinalizers(m metav1.Object, opts *metav1.DeleteOptions) (bool, []string) {
	orphan, foreground := false, false
	//nolint:staticcheck // orphanDependents is deprecated but still honoured
	switch od := opts.OrphanDependents; {
	case od != nil:
		orphan, foreground = *od, !*od
	case opts.PropagationPolicy != nil:
		orphan = *opts.PropagationPolicy == metav1.DeletePropagationOrphan
		foreground = *opts.PropagationPolicy == metav1.DeletePropagationForeground
	default:
		for _, f := range m.GetFinalizers() {
			switch f {
			case metav1.FinalizerOrphanDependents:
				orphan = true
			case metav1.FinalizerDeleteDependents:
				foreground = true
			}
		}
	}
	old := m.GetFinalizers()
	out := make([]string, 0, len(old)+1)
	for _, f := range old {
		if f != metav1.FinalizerOrphanDependents && f != metav1.FinalizerDeleteDependents {
			out = append(out, f)
		}
	}
	if orphan {
		out = append(out, metav1.FinalizerOrphanDependents)
	}
	if foreground {
		out = append(out, metav1.FinalizerDeleteDependents)
	}
	if sameSet(old, out) {
		return false, old
	}
	return true, out
}

func sameSet(a, b []string) bool {
	in := func(s string, l []string) bool {
		for _, x := range l {
			if x == s {
				return true
			}
		}
		return false
	}
	for _, x := range a {
		if !in(x, b) {
			return false
		}
	}
	for _, x := range b {
		if !in(x, a) {
			return false
		}
	}
	return true
}

// shouldDeleteDuringUpdate: an update that leaves no finalizers on an
// object marked for deletion with no grace period left deletes it (kube's
// ShouldDeleteDuringUpdate; a Namespace also needs empty spec.finalizers).
func shouldDeleteDuringUpdate(res *registry.Resource, obj, old runtime.Object) bool {
	m, err := apimeta.Accessor(obj)
	if err != nil || len(m.GetFinalizers()) > 0 {
		return false
	}
	om, err := apimeta.Accessor(old)
	if err != nil || om.GetDeletionTimestamp() == nil {
		return false
	}
	if g := om.GetDeletionGracePeriodSeconds(); g != nil && *g != 0 {
		return false
	}
	if ns, ok := obj.(*corev1.Namespace); ok && len(ns.Spec.Finalizers) > 0 {
		return false
	}
	return true
}

// deleteAnswer is the answer of a DELETE: the object (being deleted, or
// as it was), or a Success Status.
func deleteAnswer(q *request, opts *metav1.DeleteOptions, res *deleteResult) *writeResult {
	if res.raw == nil {
		return &writeResult{raw: statusSuccess(q.res, q.name, res.uid), code: http.StatusOK}
	}
	code := http.StatusOK
	//nolint:staticcheck // orphanDependents=false asks for 202 while the object stays
	if od := opts.OrphanDependents; !res.deleted && od != nil && !*od {
		code = http.StatusAccepted
	}
	return &writeResult{raw: res.raw, code: code}
}
