package daemonset

import (
	"context"
	"errors"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/litek8s/litek8s/internal/controllers/kit"
	"github.com/litek8s/litek8s/internal/controllers/workload"
)

// templateGenerationLabel is the pod label that carries the DaemonSet's
// template generation.
const templateGenerationLabel = "pod-template-generation"

// sync reconciles the DaemonSet key: record its template's revision,
// claim its pods, create and delete pods node by node when its
// expectations are met, roll out a new template, report status.
func (c *controller) sync(ctx context.Context, key string) error {
	ds, ok, err := kit.Cached(key, func(ns, name string) (*appsv1.DaemonSet, error) {
		return c.dsLister.DaemonSets(ns).Get(name)
	}, func() {
		c.creates.Forget(key)
		c.deletes.Forget(key)
	})
	if !ok {
		return err
	}
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil || sel.Empty() {
		c.log.Warn("invalid selector, not syncing", "daemonset", key, "err", err)
		return nil
	}
	if ds.DeletionTimestamp != nil {
		return nil // the garbage collector deletes its pods
	}
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return err
	}
	cur, old, err := c.history(ctx, ds, sel)
	if err != nil {
		return err
	}
	hash := cur.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]
	satisfied := c.creates.Satisfied(key) && c.deletes.Satisfied(key)
	pods, err := c.claimPods(ctx, ds, sel)
	if err != nil {
		return err
	}
	byNode := podsByNode(pods)
	var manageErr error
	if satisfied {
		var acted bool
		acted, manageErr = c.manage(ctx, key, ds, nodes, byNode, hash)
		if !acted && manageErr == nil && ds.Spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
			manageErr = c.rollingUpdate(ctx, key, ds, nodes, byNode, hash)
		}
		if manageErr == nil {
			manageErr = c.cleanupHistory(ctx, ds, old, liveHashes(pods))
		}
	}
	st := calculateStatus(ds, nodes, byNode, hash, time.Now())
	if err := c.updateStatus(ctx, ds, st); err != nil {
		return errors.Join(manageErr, err)
	}
	if manageErr == nil && ds.Spec.MinReadySeconds > 0 && st.NumberReady != st.NumberAvailable {
		c.loop.Queue.AddAfter(key, time.Duration(ds.Spec.MinReadySeconds)*time.Second)
	}
	return manageErr
}

// claimPods returns the pods ds controls after adoptions and releases
// (finished and terminating ones included: they still occupy their node).
func (c *controller) claimPods(ctx context.Context, ds *appsv1.DaemonSet, sel labels.Selector) ([]*corev1.Pod, error) {
	all, err := c.pods.Pods(ds.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	claimer := &workload.Claimer{Owner: ds, Kind: kind, Selector: sel,
		Recheck: func(ctx context.Context) (metav1.Object, error) {
			return c.client.AppsV1().DaemonSets(ds.Namespace).Get(ctx, ds.Name, metav1.GetOptions{})
		},
		Patch: func(ctx context.Context, ns, name string, p []byte) error {
			_, err := c.client.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, p, metav1.PatchOptions{})
			return err
		}}
	return workload.Claim(ctx, claimer, all)
}

// podsByNode groups pods by the node they are on or meant for, oldest
// first; pods meant for no node are left out.
func podsByNode(pods []*corev1.Pod) map[string][]*corev1.Pod {
	out := map[string][]*corev1.Pod{}
	for _, p := range pods {
		if n := targetNode(p); n != "" {
			out[n] = append(out[n], p)
		}
	}
	for _, ps := range out {
		slices.SortStableFunc(ps, func(a, b *corev1.Pod) int {
			return a.CreationTimestamp.Time.Compare(b.CreationTimestamp.Time)
		})
	}
	return out
}

// running returns the pods that still run or will: neither being
// deleted nor finished.
func running(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if workload.IsActive(p) {
			out = append(out, p)
		}
	}
	return out
}

func liveHashes(pods []*corev1.Pod) map[string]bool {
	out := map[string]bool{}
	for _, p := range pods {
		out[p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]] = true
	}
	return out
}

// isUpdated reports whether pod runs the revision hash. (kube also
// accepts a matching pod-template-generation; litek8s does not bump that
// annotation on updates, so only the hash tells.)
func isUpdated(pod *corev1.Pod, hash string) bool {
	return hash != "" && pod.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] == hash
}
