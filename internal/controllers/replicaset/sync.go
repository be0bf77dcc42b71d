package replicaset

import (
	"context"
	"errors"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/litek8s/litek8s/internal/controllers/kit"
	"github.com/litek8s/litek8s/internal/controllers/workload"
)

// sync reconciles the ReplicaSet key: claim its pods, create or delete
// pods when its expectations are met, report status.
func (c *controller) sync(ctx context.Context, key string) error {
	rs, ok, err := kit.Cached(key, c.src.get, func() { c.exp.Forget(key) })
	if !ok {
		return err
	}
	ns, name := rs.Namespace, rs.Name
	sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil || sel.Empty() {
		c.log.Warn("invalid selector, not syncing", "replicaset", key, "err", err)
		return nil
	}
	satisfied := c.exp.Satisfied(key)
	all, err := c.pods.Pods(ns).List(labels.Everything())
	if err != nil {
		return err
	}
	active := make([]*corev1.Pod, 0, len(all))
	for _, p := range all {
		if workload.IsActive(p) {
			active = append(active, p)
		}
	}
	claimer := &workload.Claimer{Owner: rs, Kind: c.src.kind, Selector: sel,
		Recheck: func(ctx context.Context) (metav1.Object, error) {
			return c.src.fetch(ctx, c.client, ns, name)
		},
		Patch: func(ctx context.Context, ns, name string, p []byte) error {
			_, err := c.client.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, p, metav1.PatchOptions{})
			return err
		}}
	pods, err := workload.Claim(ctx, claimer, active)
	if err != nil {
		return err
	}
	var manageErr error
	if satisfied && rs.DeletionTimestamp == nil {
		manageErr = c.manage(ctx, key, rs, pods)
	}
	now := time.Now()
	st := calculateStatus(rs, pods, manageErr, now)
	if err := c.updateStatus(ctx, rs, st); err != nil {
		return errors.Join(manageErr, err)
	}
	if manageErr == nil && rs.Spec.MinReadySeconds > 0 && st.ReadyReplicas != st.AvailableReplicas {
		c.loop.Queue.AddAfter(key, time.Duration(rs.Spec.MinReadySeconds)*time.Second)
	}
	return manageErr
}

// manage creates or deletes pods so that pods has spec.replicas entries.
func (c *controller) manage(ctx context.Context, key string, rs *appsv1.ReplicaSet, pods []*corev1.Pod) error {
	diff := len(pods) - int(replicas(rs))
	switch {
	case diff < 0:
		return c.create(ctx, key, rs, min(-diff, c.cfg.BurstReplicas))
	case diff > 0:
		return c.delete(ctx, key, rs, podsToDelete(pods, min(diff, c.cfg.BurstReplicas)))
	}
	return nil
}

func (c *controller) create(ctx context.Context, key string, rs *appsv1.ReplicaSet, n int) error {
	c.exp.ExpectCreations(key, n)
	ok, err := workload.SlowStart(n, func() error {
		pod := workload.PodFromTemplate(&rs.Spec.Template, rs, c.src.kind, rs.Name+"-")
		created, err := c.client.CoreV1().Pods(rs.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			if !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
				c.events.Eventf(c.src.object(rs), corev1.EventTypeWarning, "FailedCreate", "Error creating: %v", err)
			}
			return err
		}
		c.events.Eventf(c.src.object(rs), corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: %s", created.Name)
		return nil
	})
	for range n - ok { // failed or skipped: their creations will never be seen
		c.exp.CreationObserved(key)
	}
	return err
}

func (c *controller) delete(ctx context.Context, key string, rs *appsv1.ReplicaSet, victims []*corev1.Pod) error {
	d := workload.Deleter{Client: c.client, Exp: c.exp, Events: c.events, Controller: c.src.short, WarnOnFailure: true}
	return d.Delete(ctx, key, c.src.object(rs), victims)
}

func replicas(rs *appsv1.ReplicaSet) int32 {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return *rs.Spec.Replicas
}
