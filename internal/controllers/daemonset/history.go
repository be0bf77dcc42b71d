package daemonset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/litek8s/litek8s/internal/controllers/deployment"
	"github.com/litek8s/litek8s/internal/controllers/workload"
)

// errHashCollision is sync's error when the current template's revision
// name is taken by another template: status.collisionCount was raised
// and the next sync uses another name.
var errHashCollision = errors.New("daemonset: controller revision hash collision")

// revisionData is what a ControllerRevision of ds holds, as in kube: a
// strategic merge patch that replaces the template.
func revisionData(ds *appsv1.DaemonSet) ([]byte, error) {
	tpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&ds.Spec.Template)
	if err != nil {
		return nil, err
	}
	tpl["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": tpl}})
}

// sameData compares revision data as JSON values (the store may order
// keys its own way).
func sameData(a, b []byte) bool {
	var va, vb any
	return json.Unmarshal(a, &va) == nil && json.Unmarshal(b, &vb) == nil && apiequality.Semantic.DeepEqual(va, vb)
}

// history returns ds's current revision (created, or renumbered to come
// last, when needed) and its other revisions, oldest first.
func (c *controller) history(ctx context.Context, ds *appsv1.DaemonSet, sel labels.Selector) (*appsv1.ControllerRevision, []*appsv1.ControllerRevision, error) {
	all, err := c.revisions.ControllerRevisions(ds.Namespace).List(labels.Everything())
	if err != nil {
		return nil, nil, err
	}
	claimer := &workload.Claimer{Owner: ds, Kind: kind, Selector: sel,
		Recheck: func(ctx context.Context) (metav1.Object, error) {
			return c.client.AppsV1().DaemonSets(ds.Namespace).Get(ctx, ds.Name, metav1.GetOptions{})
		},
		Patch: func(ctx context.Context, ns, name string, p []byte) error {
			_, err := c.client.AppsV1().ControllerRevisions(ns).Patch(ctx, name, types.MergePatchType, p, metav1.PatchOptions{})
			return err
		}}
	revs, err := workload.Claim(ctx, claimer, all)
	if err != nil {
		return nil, nil, err
	}
	data, err := revisionData(ds)
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(revs, func(a, b *appsv1.ControllerRevision) int { return int(a.Revision - b.Revision) })
	var cur *appsv1.ControllerRevision
	var old []*appsv1.ControllerRevision
	var last int64
	for _, r := range revs {
		last = max(last, r.Revision)
		switch {
		case !sameData(r.Data.Raw, data):
			old = append(old, r)
		case cur != nil: // a duplicate of the current one: keep the newest
			old = append(old, cur)
			cur = r
		default:
			cur = r
		}
	}
	if cur == nil {
		cur, err = c.createRevision(ctx, ds, data, last+1)
		return cur, old, err
	}
	if cur.Revision < last { // rolled back to an older template
		cp := cur.DeepCopy()
		cp.Revision = last + 1
		if cur, err = c.client.AppsV1().ControllerRevisions(ds.Namespace).Update(ctx, cp, metav1.UpdateOptions{}); err != nil {
			return nil, nil, err
		}
	}
	return cur, old, nil
}

// createRevision records ds's template as revision n, named
// "<ds>-<hash>" and labelled with the hash.
func (c *controller) createRevision(ctx context.Context, ds *appsv1.DaemonSet, data []byte, n int64) (*appsv1.ControllerRevision, error) {
	hash := deployment.ComputeHash(&ds.Spec.Template, ds.Status.CollisionCount)
	lbls := maps.Clone(ds.Spec.Template.Labels)
	if lbls == nil {
		lbls = map[string]string{}
	}
	lbls[appsv1.DefaultDaemonSetUniqueLabelKey] = hash
	rev := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: ds.Name + "-" + hash, Namespace: ds.Namespace, Labels: lbls,
			Annotations:     maps.Clone(ds.Annotations),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, kind)}},
		Data: runtime.RawExtension{Raw: data}, Revision: n}
	created, err := c.client.AppsV1().ControllerRevisions(ds.Namespace).Create(ctx, rev, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return created, err
	}
	existing, gerr := c.client.AppsV1().ControllerRevisions(ds.Namespace).Get(ctx, rev.Name, metav1.GetOptions{})
	if gerr != nil {
		return nil, gerr
	}
	if ref := metav1.GetControllerOfNoCopy(existing); ref != nil && ref.UID == ds.UID && sameData(existing.Data.Raw, data) {
		return existing, nil // our own, not yet in the cache
	}
	cp := ds.DeepCopy()
	cp.Status.CollisionCount = ptrInc(ds.Status.CollisionCount)
	if _, err := c.client.AppsV1().DaemonSets(ds.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{}); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%w: %s (collisionCount now %d)", errHashCollision, rev.Name, *cp.Status.CollisionCount)
}

func ptrInc(p *int32) *int32 {
	n := int32(1)
	if p != nil {
		n = *p + 1
	}
	return &n
}

// cleanupHistory deletes the oldest of old beyond spec.revisionHistoryLimit,
// never one that a live pod still runs (live: the hashes of ds's pods).
func (c *controller) cleanupHistory(ctx context.Context, ds *appsv1.DaemonSet, old []*appsv1.ControllerRevision, live map[string]bool) error {
	limit := 10
	if ds.Spec.RevisionHistoryLimit != nil {
		limit = int(*ds.Spec.RevisionHistoryLimit)
	}
	var dead []*appsv1.ControllerRevision
	for _, r := range old {
		if !live[r.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]] {
			dead = append(dead, r)
		}
	}
	var errs []error
	for _, r := range dead[:max(0, len(dead)-limit)] { // old is oldest first
		err := c.client.AppsV1().ControllerRevisions(ds.Namespace).Delete(ctx, r.Name,
			metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(r.UID))})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// templateGeneration is ds's deprecated.daemonset.template.generation
// annotation ("" when absent or invalid).
func templateGeneration(ds *appsv1.DaemonSet) string {
	g := ds.Annotations[appsv1.DeprecatedTemplateGeneration]
	if _, err := strconv.ParseInt(g, 10, 64); err != nil {
		return ""
	}
	return g
}
