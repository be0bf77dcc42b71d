package podgc

import (
	"context"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// name is kube's name for the controller.
const name = "pod-garbage-collector"

// Controller deletes orphaned pods; see the package documentation.
type Controller struct {
	cfg    Config
	log    *slog.Logger
	client kubernetes.Interface
	pods   cache.Indexer
	nodes  cache.Indexer
	synced []cache.InformerSynced
	// missing is when each node that pods name was first seen missing
	// (Run's goroutine only).
	missing map[string]time.Time
}

// New builds the term's controller; cfg must be valid.
func New(kc *kit.Context, cfg Config) kit.Controller {
	pods, nodes := kc.Informers.Pods(), kc.Informers.Nodes()
	return &Controller{cfg: cfg, log: kc.Log.With("controller", name), client: kc.Client(name),
		pods: pods.GetIndexer(), nodes: nodes.GetIndexer(), missing: make(map[string]time.Time),
		synced: []cache.InformerSynced{pods.HasSynced, nodes.HasSynced}}
}

// Name is kube's name for it.
func (c *Controller) Name() string { return name }

// Run checks the pods every CheckPeriod until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return
	}
	t := time.NewTicker(c.cfg.CheckPeriod)
	defer t.Stop()
	for {
		c.gcOrphaned(ctx, time.Now())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// gcOrphaned deletes the pods of the nodes missing for the quarantine.
func (c *Controller) gcOrphaned(ctx context.Context, now time.Time) {
	byNode := make(map[string][]*corev1.Pod)
	for _, obj := range c.pods.List() {
		p := obj.(*corev1.Pod)
		if p.Spec.NodeName == "" {
			continue
		}
		if _, exists, _ := c.nodes.GetByKey(p.Spec.NodeName); !exists {
			byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
		}
	}
	for n := range c.missing {
		if _, ok := byNode[n]; !ok {
			delete(c.missing, n) // the node came back, or its pods went
		}
	}
	for n, pods := range byNode {
		first, ok := c.missing[n]
		if !ok {
			c.missing[n] = now
			continue
		}
		if now.Sub(first) < c.cfg.Quarantine || !c.nodeGone(ctx, n) {
			continue
		}
		for _, p := range pods {
			if err := c.deleteOrphan(ctx, p); err != nil && ctx.Err() == nil {
				c.log.Warn("deleting an orphaned pod", "pod", p.Namespace+"/"+p.Name, "node", n, "err", err)
			}
		}
	}
}

// nodeGone asks the API (not the cache) whether node n is gone.
func (c *Controller) nodeGone(ctx context.Context, n string) bool {
	_, err := c.client.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		c.log.Warn("checking a missing node", "node", n, "err", err)
	}
	return apierrors.IsNotFound(err)
}

// deleteOrphan marks p Failed (unless it finished) and force deletes it.
func (c *Controller) deleteOrphan(ctx context.Context, p *corev1.Pod) error {
	if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
		failed := p.DeepCopy()
		failed.Status.Phase = corev1.PodFailed
		setCondition(&failed.Status, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			ObservedGeneration: p.Generation, Reason: "DeletionByPodGC", Message: "PodGC: node no longer exists"})
		if _, err := c.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, failed, metav1.UpdateOptions{}); err != nil {
			return ignoreNotFound(err) // a conflict: the next check tries again
		}
	}
	c.log.Info("force deleting an orphaned pod", "pod", p.Namespace+"/"+p.Name, "node", p.Spec.NodeName)
	zero := int64(0)
	return ignoreNotFound(c.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero, Preconditions: metav1.NewUIDPreconditions(string(p.UID))}))
}

// setCondition sets cond in st; the transition time changes with the
// status.
func setCondition(st *corev1.PodStatus, cond corev1.PodCondition) {
	cond.LastTransitionTime = metav1.Now()
	for i := range st.Conditions {
		if st.Conditions[i].Type == cond.Type {
			if st.Conditions[i].Status == cond.Status {
				cond.LastTransitionTime = st.Conditions[i].LastTransitionTime
			}
			st.Conditions[i] = cond
			return
		}
	}
	st.Conditions = append(st.Conditions, cond)
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
