package resourcequota

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/litek8s/litek8s/internal/quota"
)

// errNotSynced: a counted resource's informer has not listed yet; the
// quota is synced again after a backoff.
var errNotSynced = errors.New("resourcequota: informer not synced yet")

// sync recomputes the status of the quota key and writes it when it
// changed.
func (c *controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	q, err := c.quotas.ResourceQuotas(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	now := c.now()
	used, next, err := c.usage(q, now)
	if err != nil {
		return err
	}
	if !next.IsZero() { // a pod being deleted stops counting then
		c.loop.Queue.AddAfter(key, next.Sub(now))
	}
	hard := q.Spec.Hard
	if quota.Equal(q.Status.Hard, hard) && quota.Equal(q.Status.Used, used) {
		return nil
	}
	up := q.DeepCopy()
	up.Status = corev1.ResourceQuotaStatus{Hard: up.Spec.Hard, Used: used}
	_, err = c.client.CoreV1().ResourceQuotas(ns).UpdateStatus(ctx, up, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// usage returns what the objects q selects use of each of its hard
// resources (0 for those nothing uses), and the earliest time a counted
// pod being deleted stops counting (zero: none).
func (c *controller) usage(q *corev1.ResourceQuota, now time.Time) (corev1.ResourceList, time.Time, error) {
	hard := q.Spec.Hard
	var resources []string
	for n := range hard {
		if r := quota.ResourceOf(n); r != "" && !slices.Contains(resources, r) {
			resources = append(resources, r)
		}
	}
	slices.Sort(resources)
	used := corev1.ResourceList{}
	var next time.Time
	for _, r := range resources {
		inf := c.informer(r)
		if !inf.HasSynced() {
			return nil, time.Time{}, fmt.Errorf("%w: %s", errNotSynced, r)
		}
		objs, err := inf.GetIndexer().ByIndex(cache.NamespaceIndex, q.Namespace)
		if err != nil {
			return nil, time.Time{}, err
		}
		names := quota.Covered(r, hard)
		for _, o := range objs {
			obj, ok := o.(runtime.Object)
			if !ok || !quota.Matches(q, hard, r, obj) {
				continue
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				if end, ok := quota.GraceEnd(pod); ok && end.After(now) && (next.IsZero() || end.Before(next)) {
					next = end
				}
			}
			used = quota.Add(used, quota.Mask(quota.Usage(r, obj, now), names))
		}
	}
	for n := range hard {
		if _, ok := used[n]; !ok {
			used[n] = resource.MustParse("0")
		}
	}
	return used, next, nil
}
