package api

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
	"github.com/litek8s/litek8s/internal/quota"
)

// Quota admission (kube's ResourceQuota plugin): a create, or an update
// that uses more (a claim resized, a service turned NodePort), of an
// object that a quota of its namespace constrains is charged to the
// quota's status.used before the object is stored, and refused (403) when
// it would pass status.hard. The charge is a write of the quota with its
// resourceVersion as precondition: two writes racing for the last unit
// cannot both pass, the loser evaluates again on the new usage. A write
// that fails after its charge leaves the quota over-charged until the
// resourcequota controller recomputes it, as in kube.
//
// As in kube, the limits are status.hard (what the controller last
// published), so a quota the controller has not synced yet constrains
// nothing, and one whose status names a resource without its usage
// refuses with "status unknown for quota".

// quotaCounter is implemented by stores that tell, without allocating,
// how many objects of a resource a namespace holds: the path of a
// namespace without quotas then costs nothing.
type quotaCounter interface {
	Count(resource, namespace string) int
}

// admitQuota charges obj (old: the stored object of an update, nil on
// create) to the quotas of q's namespace; dryRun evaluates only.
func (s *Server) admitQuota(ctx context.Context, q *request, obj, old runtime.Object, dryRun bool) error {
	if q.subresource != "" || !q.res.Namespaced || q.namespace == "" || !s.hasQuotas(ctx, q.namespace) {
		return nil
	}
	quotaRes := s.registry().Lookup("v1", "resourcequotas")
	for range maxConflictRetries {
		l, err := s.store.List(ctx, "resourcequotas", q.namespace, false)
		if err != nil {
			return storeErr(err, quotaRes, "")
		}
		var quotas []storedQuota
		var derr error
		l.Range("", func(o *kv.Object) bool {
			d, err := decodeStored(quotaRes, o)
			if err != nil {
				derr = err
				return false
			}
			quotas = append(quotas, storedQuota{cur: o, q: d.(*corev1.ResourceQuota)})
			return true
		})
		if derr != nil {
			return derr
		}
		charged, err := evaluateQuotas(quotas, q.res.StoreKey(), obj, old, s.cfg.Now())
		if err != nil {
			return apierrors.NewForbidden(q.res.GroupResource(), q.name, err)
		}
		if dryRun {
			return nil
		}
		err = s.writeCharges(ctx, quotaRes, charged)
		if !errors.Is(err, errRetry) {
			return err
		}
	}
	return storeErr(kv.ErrConflict, quotaRes, "")
}

// hasQuotas reports whether namespace holds any ResourceQuota (true when
// the store cannot tell: the slow path answers then).
func (s *Server) hasQuotas(ctx context.Context, namespace string) bool {
	if c, ok := s.store.(quotaCounter); ok {
		return c.Count("resourcequotas", namespace) > 0
	}
	l, err := s.store.List(ctx, "resourcequotas", namespace, false)
	return err != nil || l.Len() > 0
}

// writeCharges stores the charged quotas, each with its resourceVersion
// as precondition; errRetry when one changed meanwhile.
func (s *Server) writeCharges(ctx context.Context, res *registry.Resource, charged []storedQuota) error {
	for _, c := range charged {
		raw, err := encode(c.q)
		if err != nil {
			return err
		}
		_, err = s.store.Propose(ctx, kv.Write{Op: kv.OpUpdate, Key: c.cur.Key, ExpectedRV: c.cur.RV, Object: raw})
		switch {
		case errors.Is(err, kv.ErrConflict), errors.Is(err, kv.ErrNotFound):
			return errRetry
		case err != nil:
			return storeErr(err, res, c.q.Name)
		}
	}
	return nil
}

// storedQuota is a quota as stored (cur) and decoded (q).
type storedQuota struct {
	cur *kv.Object
	q   *corev1.ResourceQuota
}

// evaluateQuotas returns the quotas obj (of store resource res; old is the
// stored object of an update, nil on create) is charged to, their
// status.used updated; the error (kube's message) when it may not be
// written.
func evaluateQuotas(quotas []storedQuota, res string, obj, old runtime.Object, now time.Time) ([]storedQuota, error) {
	var matched []storedQuota
	for _, sq := range quotas {
		rq := sq.q
		hard := rq.Status.Hard
		if !quota.Matches(rq, hard, res, obj) {
			continue
		}
		restricted := quota.Covered(res, hard)
		if pod, ok := obj.(*corev1.Pod); ok {
			if err := quota.Constraints(pod, restricted); err != nil {
				return nil, fmt.Errorf("failed quota: %s: %v", rq.Name, err)
			}
		}
		for _, n := range restricted {
			if _, ok := rq.Status.Used[n]; !ok {
				return nil, fmt.Errorf("status unknown for quota: %s, resources: %s", rq.Name, quota.NamesString(restricted))
			}
		}
		matched = append(matched, sq)
	}
	if len(matched) == 0 {
		return nil, nil
	}
	usage := quota.Usage(res, obj, now)
	var negative []corev1.ResourceName
	for n, v := range usage {
		if v.Sign() < 0 {
			negative = append(negative, n)
		}
	}
	if len(negative) > 0 {
		return nil, fmt.Errorf("quota usage is negative for resource(s): %s", quota.NamesString(negative))
	}
	var delta corev1.ResourceList
	if old != nil {
		delta = quota.SubtractNonNegative(usage, quota.Usage(res, old, now))
	}
	var charged []storedQuota
	for _, sq := range matched {
		rq := sq.q
		d := usage
		if old != nil && quota.Matches(rq, rq.Status.Hard, res, old) {
			d = delta // it was charged for old already
		}
		d = quota.RemoveZeros(d)
		if len(d) == 0 {
			continue
		}
		hard := rq.Status.Hard
		requested := quota.Mask(d, quota.Names(hard))
		if len(quota.RemoveZeros(requested)) == 0 {
			continue // nothing it limits
		}
		newUsed := quota.Add(rq.Status.Used, requested)
		if ex := quota.Exceeded(quota.Mask(newUsed, quota.Names(requested)), hard); len(ex) > 0 {
			return nil, fmt.Errorf("exceeded quota: %s, requested: %s, used: %s, limited: %s", rq.Name,
				quota.String(quota.Mask(requested, ex)), quota.String(quota.Mask(rq.Status.Used, ex)), quota.String(quota.Mask(hard, ex)))
		}
		up := rq.DeepCopy()
		up.Status.Used = newUsed
		charged = append(charged, storedQuota{cur: sq.cur, q: up})
	}
	return charged, nil
}
