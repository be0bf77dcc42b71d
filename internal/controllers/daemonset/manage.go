package daemonset

import (
	"context"
	"errors"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/controllers/workload"
)

// manage creates a pod on every node that should run one and has none,
// deletes failed pods (after their node's backoff), extra pods and pods
// on nodes that should no longer run one, and unscheduled pods meant for
// nodes that no longer exist. acted reports whether it wrote anything.
func (c *controller) manage(ctx context.Context, key string, ds *appsv1.DaemonSet, nodes []*corev1.Node,
	byNode map[string][]*corev1.Pod, hash string) (acted bool, err error) {
	var create []string
	var victims []*corev1.Pod
	exists := make(map[string]bool, len(nodes))
	surge := usesSurge(ds)
	c.failed.GC() // forget the backoff of nodes whose pods stopped failing long ago
	for _, node := range nodes {
		exists[node.Name] = true
		pods := byNode[node.Name]
		pl := place(ds, node)
		switch {
		case pl.shouldRun && len(pods) == 0:
			create = append(create, node.Name)
		case pl.shouldContinue:
			victims = append(victims, c.excess(key, ds, node.Name, pods, hash, surge)...)
		default:
			victims = append(victims, deletable(pods)...)
		}
	}
	for n, pods := range byNode {
		for _, p := range pods {
			if !exists[n] && p.Spec.NodeName == "" && p.DeletionTimestamp == nil {
				victims = append(victims, p) // its node is gone: it can never be scheduled
			}
		}
	}
	create = create[:min(len(create), c.cfg.BurstReplicas)]
	victims = victims[:min(len(victims), c.cfg.BurstReplicas)]
	return len(create)+len(victims) > 0, c.syncNodes(ctx, key, ds, victims, create, hash)
}

// excess returns the pods of a node that keeps running ds to delete:
// failed pods once the node's backoff allows it, and all but one running
// pod (with surge, an available old pod may stay next to a new one that
// is not available yet).
func (c *controller) excess(key string, ds *appsv1.DaemonSet, node string, pods []*corev1.Pod, hash string, surge bool) []*corev1.Pod {
	var out, alive []*corev1.Pod
	for _, p := range pods {
		switch {
		case p.DeletionTimestamp != nil:
		case p.Status.Phase == corev1.PodFailed:
			bk := string(ds.UID) + "/" + node
			now := c.failed.Clock.Now()
			if c.failed.IsInBackOffSinceUpdate(bk, now) {
				c.loop.Queue.AddAfter(key, c.failed.Get(bk))
				continue
			}
			c.failed.Next(bk, now)
			c.events.Eventf(ds, corev1.EventTypeWarning, "FailedDaemonPod", "Found failed daemon pod %s/%s on node %s, will try to kill it",
				p.Namespace, p.Name, node)
			out = append(out, p)
		default:
			alive = append(alive, p)
		}
	}
	if len(alive) <= 1 {
		return out
	}
	if !surge { // keep the oldest
		return append(out, alive[1:]...)
	}
	// Keep the oldest updated pod, and the oldest old pod too while it is
	// ready and the updated one is not (kube's surge rule).
	var oldPod, newPod *corev1.Pod
	for _, p := range alive {
		switch {
		case isUpdated(p, hash) && newPod == nil:
			newPod = p
		case !isUpdated(p, hash) && oldPod == nil:
			oldPod = p
		default:
			out = append(out, p)
		}
	}
	if oldPod != nil && newPod != nil && (workload.IsReady(newPod) || !workload.IsReady(oldPod)) {
		out = append(out, oldPod)
	}
	return out
}

// deletable returns pods but those already being deleted.
func deletable(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// syncNodes deletes victims and creates a daemon pod for each node of
// create, under expectations.
func (c *controller) syncNodes(ctx context.Context, key string, ds *appsv1.DaemonSet, victims []*corev1.Pod, create []string, hash string) error {
	var errs []error
	if len(victims) > 0 {
		d := workload.Deleter{Client: c.client, Exp: c.deletes, Events: c.events, Controller: "daemonset", WarnOnFailure: true}
		errs = append(errs, d.Delete(ctx, key, ds, victims))
	}
	if len(create) > 0 {
		c.creates.ExpectCreations(key, len(create))
		next := make(chan string, len(create))
		for _, n := range create {
			next <- n
		}
		ok, err := workload.SlowStart(len(create), func() error { return c.createPod(ctx, ds, <-next, hash) })
		for range len(create) - ok {
			c.creates.CreationObserved(key)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// createPod creates ds's pod for node: the template with the revision's
// labels, the daemon tolerations and a node affinity on the node's name.
func (c *controller) createPod(ctx context.Context, ds *appsv1.DaemonSet, node, hash string) error {
	pod := newPod(ds, node, hash)
	created, err := c.client.CoreV1().Pods(ds.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		if !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			c.events.Eventf(ds, corev1.EventTypeWarning, "FailedCreate", "Error creating: %v", err)
		}
		return err
	}
	c.events.Eventf(ds, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: %s", created.Name)
	return nil
}

// newPod is ds's pod for node at revision hash.
func newPod(ds *appsv1.DaemonSet, node, hash string) *corev1.Pod {
	pod := workload.PodFromTemplate(&ds.Spec.Template, ds, kind, ds.Name+"-")
	pod.Labels = maps.Clone(pod.Labels)
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] = hash
	if g := templateGeneration(ds); g != "" {
		pod.Labels[templateGenerationLabel] = g
	}
	pod.Spec.Tolerations = daemonTolerations(&pod.Spec)
	pod.Spec.Affinity = pinToNode(pod.Spec.Affinity, node)
	return pod
}

func usesSurge(ds *appsv1.DaemonSet) bool {
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType || ru == nil || ru.MaxSurge == nil {
		return false
	}
	return ru.MaxSurge.IntVal != 0 || ru.MaxSurge.StrVal != "" && ru.MaxSurge.StrVal != "0%"
}
