package statefulset

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
)

// ControllerRevisions. A revision holds what kube's controller stores: the
// strategic merge patch {"spec":{"template":{"$patch":"replace",…}}} that
// restores the set's template, named <set>-<hash> where hash is FNV-32 of
// the patch and the collision count, labelled with the template's labels
// and controller.kubernetes.io/hash, annotated with the set's
// annotations. Pods carry their revision's name in
// controller-revision-hash.

// hashLabel is the revision's hash label (kube's
// ControllerRevisionHashLabel).
const hashLabel = "controller.kubernetes.io/hash"

// templatePatch is set's template as a revision's data: keys sorted at
// every level, as kube's json.Marshal of a decoded map writes them.
func templatePatch(set *appsv1.StatefulSet) ([]byte, error) {
	raw, err := json.Marshal(&set.Spec.Template)
	if err != nil {
		return nil, err
	}
	var tpl map[string]any
	if err := json.Unmarshal(raw, &tpl); err != nil {
		return nil, err
	}
	tpl["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": tpl}})
}

// revisionHash is kube's HashControllerRevision of data with a probe.
func revisionHash(data []byte, probe *int32) string {
	h := fnv.New32()
	h.Write(data)
	if probe != nil {
		h.Write([]byte(strconv.FormatInt(int64(*probe), 10)))
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

func revisionName(set string, hash string) string {
	if len(set) > 223 {
		set = set[:223]
	}
	return set + "-" + hash
}

// newRevision is set's revision number n, named for collisionCount.
func newRevision(set *appsv1.StatefulSet, n int64, collisionCount *int32) (*appsv1.ControllerRevision, error) {
	data, err := templatePatch(set)
	if err != nil {
		return nil, err
	}
	hash := revisionHash(data, collisionCount)
	lbls := maps.Clone(set.Spec.Template.Labels)
	if lbls == nil {
		lbls = map[string]string{}
	}
	lbls[hashLabel] = hash
	annotations := maps.Clone(set.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: revisionName(set.Name, hash), Namespace: set.Namespace, Labels: lbls,
			Annotations: annotations, OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(set, kind)}},
		Data: runtime.RawExtension{Raw: data}, Revision: n,
	}, nil
}

// applyRevision is set with rev's template.
func applyRevision(set *appsv1.StatefulSet, rev *appsv1.ControllerRevision) (*appsv1.StatefulSet, error) {
	var patch struct {
		Spec struct {
			Template *corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(rev.Data.Raw, &patch); err != nil {
		return nil, fmt.Errorf("statefulset: revision %s: %w", rev.Name, err)
	}
	if patch.Spec.Template == nil {
		return nil, fmt.Errorf("statefulset: revision %s holds no template", rev.Name)
	}
	out := set.DeepCopy()
	out.Spec.Template = *patch.Spec.Template
	return out, nil
}

func equalRevision(a, b *appsv1.ControllerRevision) bool { return bytes.Equal(a.Data.Raw, b.Data.Raw) }

// sortRevisions orders by revision number, then creation, then name.
func sortRevisions(revs []*appsv1.ControllerRevision) {
	slices.SortStableFunc(revs, func(a, b *appsv1.ControllerRevision) int {
		switch {
		case a.Revision != b.Revision:
			return cmpInt(a.Revision, b.Revision)
		case !a.CreationTimestamp.Equal(&b.CreationTimestamp):
			return a.CreationTimestamp.Time.Compare(b.CreationTimestamp.Time)
		}
		return strings.Compare(a.Name, b.Name)
	})
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// listRevisions returns the revisions of set's namespace that match sel
// and that set controls or nobody does.
func (c *controller) listRevisions(set *appsv1.StatefulSet, sel labels.Selector) ([]*appsv1.ControllerRevision, error) {
	all, err := c.revs.ControllerRevisions(set.Namespace).List(sel)
	if err != nil {
		return nil, err
	}
	out := all[:0:0]
	for _, r := range all {
		if ref := metav1.GetControllerOfNoCopy(r); ref == nil || ref.UID == set.UID {
			out = append(out, r)
		}
	}
	return out, nil
}

// revisions returns set's current and update revisions and its collision
// count, creating the update revision (or renumbering an equal earlier
// one: a rollback) as kube does. revs must be sorted.
func (c *controller) revisions(ctx context.Context, key string, set *appsv1.StatefulSet, revs []*appsv1.ControllerRevision) (
	current, update *appsv1.ControllerRevision, collisions int32, err error) {
	if set.Status.CollisionCount != nil {
		collisions = *set.Status.CollisionCount
	}
	next := int64(1)
	if len(revs) > 0 {
		next = revs[len(revs)-1].Revision + 1
	}
	update, err = newRevision(set, next, &collisions)
	if err != nil {
		return nil, nil, collisions, err
	}
	var equal []*appsv1.ControllerRevision
	for _, r := range revs {
		if equalRevision(r, update) {
			equal = append(equal, r)
		}
	}
	switch {
	case len(equal) > 0 && equalRevision(revs[len(revs)-1], equal[len(equal)-1]):
		update = revs[len(revs)-1] // unchanged
	case len(equal) > 0: // back to an earlier template: it becomes the newest
		if update, err = c.renumberRevision(ctx, key, equal[len(equal)-1], next); err != nil {
			return nil, nil, collisions, err
		}
	default:
		if update, err = c.createRevision(ctx, key, set, update, &collisions); err != nil {
			return nil, nil, collisions, err
		}
	}
	for _, r := range revs {
		if r.Name == set.Status.CurrentRevision {
			current = r
			break
		}
	}
	if current == nil {
		current = update
	}
	return current, update, collisions, nil
}

// createRevision creates rev, bumping collisions while its name is taken
// by a revision with other data.
func (c *controller) createRevision(ctx context.Context, key string, set *appsv1.StatefulSet, rev *appsv1.ControllerRevision,
	collisions *int32) (*appsv1.ControllerRevision, error) {
	cli := c.client.AppsV1().ControllerRevisions(set.Namespace)
	for {
		cp := rev.DeepCopy()
		hash := revisionHash(cp.Data.Raw, collisions)
		cp.Name, cp.Labels[hashLabel] = revisionName(set.Name, hash), hash
		created, err := cli.Create(ctx, cp, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			existing, err := cli.Get(ctx, cp.Name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			if bytes.Equal(existing.Data.Raw, cp.Data.Raw) {
				return existing, nil
			}
			*collisions++
			continue
		}
		if err != nil {
			return nil, err
		}
		c.written.wrote(key, revisionsResource, created.ResourceVersion)
		return created, nil
	}
}

// renumberRevision gives rev the revision number n.
func (c *controller) renumberRevision(ctx context.Context, key string, rev *appsv1.ControllerRevision, n int64) (*appsv1.ControllerRevision, error) {
	if rev.Revision == n {
		return rev, nil
	}
	cp := rev.DeepCopy()
	cp.Revision = n
	updated, err := c.client.AppsV1().ControllerRevisions(cp.Namespace).Update(ctx, cp, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	c.written.wrote(key, revisionsResource, updated.ResourceVersion)
	return updated, nil
}

// truncateHistory deletes the oldest revisions that neither the status
// nor a pod uses beyond spec.revisionHistoryLimit. revs must be sorted.
func (c *controller) truncateHistory(ctx context.Context, set *appsv1.StatefulSet, pods []*corev1.Pod,
	revs []*appsv1.ControllerRevision, current, update *appsv1.ControllerRevision) error {
	live := map[string]bool{}
	if current != nil {
		live[current.Name] = true
	}
	if update != nil {
		live[update.Name] = true
	}
	for _, p := range pods {
		live[revisionOf(p)] = true
	}
	var old []*appsv1.ControllerRevision
	for _, r := range revs {
		if !live[r.Name] {
			old = append(old, r)
		}
	}
	limit := 10
	if set.Spec.RevisionHistoryLimit != nil {
		limit = int(*set.Spec.RevisionHistoryLimit)
	}
	if limit < 0 || len(old) <= limit {
		return nil
	}
	for _, r := range old[:len(old)-limit] {
		err := c.client.AppsV1().ControllerRevisions(r.Namespace).Delete(ctx, r.Name,
			metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(r.UID))})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}
