package workload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Claimer decides which objects an owner controls, as kube's
// ControllerRefManager: an object whose controller is the owner and that
// matches the selector is claimed; one that no longer matches is
// released; an orphan that matches is adopted. Adoptions and releases are
// merge patches of metadata.ownerReferences that carry the object's uid
// and resourceVersion, so a decision taken on a stale cache fails (409)
// instead of rewriting a newer object.
type Claimer struct {
	Owner    metav1.Object
	Kind     schema.GroupVersionKind
	Selector labels.Selector
	// Recheck reads the owner from the API (not the cache) once, before
	// the first adoption: an owner that is being deleted or was replaced
	// (another uid) must not adopt anything.
	Recheck func(ctx context.Context) (metav1.Object, error)
	// Patch sends a merge patch to the object namespace/name.
	Patch func(ctx context.Context, namespace, name string, patch []byte) error

	checked  error // Recheck's verdict once made
	didCheck bool
}

// Claim returns the objects of objs the owner controls after adopting
// and releasing; errors of single objects are joined, the others are
// still claimed.
func Claim[T metav1.Object](ctx context.Context, c *Claimer, objs []T) ([]T, error) {
	var out []T
	var errs []error
	deleting := c.Owner.GetDeletionTimestamp() != nil
	for _, o := range objs {
		ref := metav1.GetControllerOfNoCopy(o)
		matches := c.Selector.Matches(labels.Set(o.GetLabels()))
		switch {
		case ref != nil && ref.UID != c.Owner.GetUID(): // someone else's
		case ref != nil && (matches || deleting):
			out = append(out, o)
		case ref != nil: // ours, no longer matching
			if err := c.patch(ctx, o, release(o.GetOwnerReferences(), c.Owner.GetUID())); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, err)
			}
		case !matches || deleting || o.GetDeletionTimestamp() != nil:
		default:
			if err := c.canAdopt(ctx); err != nil {
				return out, err
			}
			refs := append(o.GetOwnerReferences(), *metav1.NewControllerRef(c.Owner, c.Kind))
			switch err := c.patch(ctx, o, refs); {
			case err == nil:
				out = append(out, o)
			case !apierrors.IsNotFound(err):
				errs = append(errs, err)
			}
		}
	}
	return out, errors.Join(errs...)
}

// ErrOwnerGone is Claim's error when the owner changed under it.
var ErrOwnerGone = errors.New("workload: the owner is being deleted or was replaced; not adopting")

func (c *Claimer) canAdopt(ctx context.Context) error {
	if c.didCheck {
		return c.checked
	}
	c.didCheck = true
	fresh, err := c.Recheck(ctx)
	switch {
	case err != nil:
		c.checked = err
	case fresh.GetUID() != c.Owner.GetUID() || fresh.GetDeletionTimestamp() != nil:
		c.checked = fmt.Errorf("%w: %s %s/%s", ErrOwnerGone, c.Kind.Kind, c.Owner.GetNamespace(), c.Owner.GetName())
	}
	return c.checked
}

func (c *Claimer) patch(ctx context.Context, o metav1.Object, refs []metav1.OwnerReference) error {
	if refs == nil {
		refs = []metav1.OwnerReference{}
	}
	p, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid": o.GetUID(), "resourceVersion": o.GetResourceVersion(), "ownerReferences": refs}})
	if err != nil {
		return err
	}
	return c.Patch(ctx, o.GetNamespace(), o.GetName(), p)
}

// release returns refs without the one to uid.
func release(refs []metav1.OwnerReference, uid types.UID) []metav1.OwnerReference {
	out := make([]metav1.OwnerReference, 0, len(refs))
	for _, r := range refs {
		if r.UID != uid {
			out = append(out, r)
		}
	}
	return out
}
