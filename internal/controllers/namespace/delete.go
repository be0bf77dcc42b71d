package namespace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// getLatest reads the API's latest state (the leader's store).
var getLatest = metav1.GetOptions{}

// tally is what deleting a namespace's content left behind.
type tally struct {
	// remaining counts the objects left per resource, finalizers the
	// objects each finalizer holds.
	remaining  map[schema.GroupVersionResource]int
	finalizers map[string]int
	// errs are the failures to delete content (NamespaceDeletionContentFailure).
	errs []error
}

// deleteContent deletes every object in ns, pods first, records what
// remains in ns's conditions, and returns the namespace as updated and a
// summary of what remains ("" once nothing does).
func (c *controller) deleteContent(ctx context.Context, ns *corev1.Namespace) (*corev1.Namespace, string, error) {
	gvrs := c.resources(ctx)
	if err := ctx.Err(); err != nil {
		return ns, "", err
	}
	var discoveryErr error
	if len(gvrs) == 0 {
		discoveryErr = errors.New("the API serves no namespaced resource")
	}
	t := &tally{remaining: map[schema.GroupVersionResource]int{}, finalizers: map[string]int{}}
	if slices.Contains(gvrs, podsGVR) {
		if err := c.deleteAll(ctx, ns.Name, podsGVR, t); err != nil {
			t.errs = append(t.errs, fmt.Errorf("failed to delete pods for namespace: %s, err: %w", ns.Name, err))
		}
	}
	if t.remaining[podsGVR] == 0 { // the rest once no pod is left, as in kube
		for _, gvr := range gvrs {
			if gvr == podsGVR {
				continue
			}
			if err := c.deleteAll(ctx, ns.Name, gvr, t); err != nil {
				t.errs = append(t.errs, err)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return ns, "", err
	}
	conds := t.conditions(discoveryErr)
	if updateConditions(&ns.Status, conds) {
		updated, err := c.client.CoreV1().Namespaces().UpdateStatus(ctx, ns, metav1.UpdateOptions{})
		if err != nil { // as kube: not fatal, the next pass writes them
			c.log.Debug("updating the conditions of a namespace being deleted", "namespace", ns.Name, "err", err)
		} else {
			ns = updated
		}
	}
	if err := errors.Join(append(t.errs, discoveryErr)...); err != nil {
		return ns, "", err
	}
	return ns, t.summary(), nil
}

// deleteAll deletes the objects of gvr in namespace ns and counts those
// that remain.
func (c *controller) deleteAll(ctx context.Context, ns string, gvr schema.GroupVersionResource, t *tally) error {
	ri := c.dyn.Resource(gvr).Namespace(ns)
	err := ri.DeleteCollection(ctx, c.deleteOptions(gvr), metav1.ListOptions{})
	switch {
	case apierrors.IsNotFound(err): // no longer served (its CRD went away)
		return nil
	case apierrors.IsMethodNotSupported(err):
		err = c.deleteEach(ctx, ns, gvr)
	}
	if err != nil {
		return err
	}
	l, err := ri.List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err):
		return nil
	case err != nil:
		return err
	case len(l.Items) == 0:
		return nil
	}
	t.remaining[gvr] += len(l.Items)
	unexpected := false
	for _, it := range l.Items {
		for _, f := range it.GetFinalizers() {
			t.finalizers[f]++
		}
		// An object with neither finalizers nor a graceful deletion under
		// way should have gone.
		unexpected = unexpected || len(it.GetFinalizers()) == 0 && it.GetDeletionTimestamp() == nil
	}
	if unexpected {
		return fmt.Errorf("unexpected items still remain in namespace: %s for gvr: %v", ns, gvr)
	}
	return nil
}

// deleteEach deletes the objects of gvr one by one (for resources that do
// not serve deletecollection).
func (c *controller) deleteEach(ctx context.Context, ns string, gvr schema.GroupVersionResource) error {
	ri := c.dyn.Resource(gvr).Namespace(ns)
	l, err := ri.List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, it := range l.Items {
		opts := c.deleteOptions(gvr)
		uid := it.GetUID()
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
		if err := ri.Delete(ctx, it.GetName(), opts); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	return nil
}

// deleteOptions: Background, so that the garbage collector adds no orphan
// finalizer; pods with no grace period under ForcePods.
func (c *controller) deleteOptions(gvr schema.GroupVersionResource) metav1.DeleteOptions {
	background := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &background}
	if gvr == podsGVR && c.cfg.ForcePods {
		zero := int64(0)
		opts.GracePeriodSeconds = &zero
	}
	return opts
}

// summary says what remains ("" when nothing does).
func (t *tally) summary() string {
	var parts []string
	for gvr, n := range t.remaining {
		parts = append(parts, fmt.Sprintf("%s.%s has %d resource instances", gvr.Resource, gvr.Group, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// finalize removes the "kubernetes" finalizer from the emptied ns; with
// no finalizer left the API deletes the namespace.
func (c *controller) finalize(ctx context.Context, ns *corev1.Namespace) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		out := ns.DeepCopy()
		out.Spec.Finalizers = slices.DeleteFunc(out.Spec.Finalizers, func(f corev1.FinalizerName) bool {
			return f == corev1.FinalizerKubernetes
		})
		if len(out.Spec.Finalizers) == len(ns.Spec.Finalizers) {
			return nil // not ours to remove
		}
		_, err := c.client.CoreV1().Namespaces().Finalize(ctx, out, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			latest, gerr := c.client.CoreV1().Namespaces().Get(ctx, ns.Name, getLatest)
			switch {
			case apierrors.IsNotFound(gerr):
				return nil
			case gerr != nil:
				return gerr
			case latest.UID != ns.UID:
				return nil // a new namespace of the same name
			}
			ns = latest
		}
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
}
