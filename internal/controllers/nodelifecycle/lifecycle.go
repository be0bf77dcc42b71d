package nodelifecycle

import (
	"context"
	"log/slog"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// name is kube's name for the controller.
const name = "node-lifecycle-controller"

// Controller watches node health; see the package documentation.
type Controller struct {
	cfg    Config
	log    *slog.Logger
	client kubernetes.Interface
	events record.EventRecorder
	nodes  cache.Indexer
	pods   cache.Indexer // by kit.PodNodeIndex
	queue  workqueue.TypedRateLimitingInterface[string]
	synced []cache.InformerSynced

	mu sync.Mutex // guards probes
	// probes are the last signs of life by node name.
	probes map[string]*probe
}

// probe is a node's last sign of life, on this controller's clock.
type probe struct {
	seen      time.Time
	renew     time.Time // the lease's renewTime
	heartbeat time.Time // the Ready condition's lastHeartbeatTime
}

// New builds the term's controller; cfg must be valid.
func New(kc *kit.Context, cfg Config) kit.Controller {
	c := &Controller{cfg: cfg, log: kc.Log.With("controller", name), client: kc.Client(name),
		events: kc.Recorder(name), probes: make(map[string]*probe),
		queue: kit.NewQueue(kc, name, cfg.Limiter())}
	nodes, leases := kc.Informers.Nodes(), kc.Informers.Leases()
	pods, err := kc.Informers.PodsByNode()
	if err != nil {
		c.log.Error("pod index", "err", err) // a programming error
	}
	c.nodes, c.pods = nodes.GetIndexer(), pods.GetIndexer()
	pr, _ := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.podChanged,
		UpdateFunc: func(_, obj any) { c.podChanged(obj) },
	})
	nr, _ := nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.nodeChanged,
		UpdateFunc: func(_, obj any) { c.nodeChanged(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if n, ok := obj.(*corev1.Node); ok {
				c.mu.Lock()
				delete(c.probes, n.Name)
				c.mu.Unlock()
			}
		}})
	lr, _ := leases.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.leaseChanged,
		UpdateFunc: func(_, obj any) { c.leaseChanged(obj) },
	})
	c.synced = []cache.InformerSynced{nr.HasSynced, lr.HasSynced, pr.HasSynced}
	return c
}

// Name is kube's name for it.
func (c *Controller) Name() string { return name }

// Run watches the nodes until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	defer c.queue.ShutDown()
	stop := context.AfterFunc(ctx, c.queue.ShutDown)
	defer stop()
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { c.monitor(ctx) })
	kit.RunWorkers(ctx, c.queue, c.cfg.Workers, c.process)
	wg.Wait()
}

// monitor enqueues every node each MonitorPeriod.
func (c *Controller) monitor(ctx context.Context) {
	t := time.NewTicker(c.cfg.MonitorPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, n := range c.nodes.ListKeys() {
			c.queue.Add(n)
		}
	}
}

func (c *Controller) process(ctx context.Context, key string) {
	if err := c.sync(ctx, key); err != nil {
		if ctx.Err() == nil {
			c.log.Debug("node sync failed", "node", key, "err", err)
		}
		c.queue.AddRateLimited(key)
		return
	}
	c.queue.Forget(key)
}

// nodeChanged records the node's Ready heartbeat as a sign of life.
func (c *Controller) nodeChanged(obj any) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return
	}
	var hb time.Time
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			hb = cond.LastHeartbeatTime.Time
		}
	}
	c.mu.Lock()
	p := c.probe(n.Name)
	if !hb.Equal(p.heartbeat) {
		p.heartbeat, p.seen = hb, time.Now()
	}
	c.mu.Unlock()
	c.queue.Add(n.Name)
}

// leaseChanged records a lease renewal as a sign of life.
func (c *Controller) leaseChanged(obj any) {
	l, ok := obj.(*coordinationv1.Lease)
	if !ok || l.Namespace != corev1.NamespaceNodeLease || l.Spec.RenewTime == nil {
		return
	}
	c.mu.Lock()
	p := c.probe(l.Name)
	renewed := !l.Spec.RenewTime.Time.Equal(p.renew)
	if renewed {
		p.renew, p.seen = l.Spec.RenewTime.Time, time.Now()
	}
	c.mu.Unlock()
	if renewed {
		c.queue.Add(l.Name)
	}
}

// probe returns name's probe, first seen now; caller must hold mu.
func (c *Controller) probe(name string) *probe {
	p, ok := c.probes[name]
	if !ok {
		p = &probe{seen: time.Now()}
		c.probes[name] = p
	}
	return p
}

// sync marks the node Unknown when it stopped showing signs of life, its
// pods not ready while it is not Ready, and makes its taints follow its
// conditions.
func (c *Controller) sync(ctx context.Context, name string) error {
	obj, exists, _ := c.nodes.GetByKey(name)
	if !exists {
		return nil
	}
	node := obj.(*corev1.Node)
	c.mu.Lock()
	silent := time.Since(c.probe(name).seen)
	c.mu.Unlock()
	now := time.Now()
	if silent > c.cfg.GracePeriod {
		n := node.DeepCopy()
		if markUnknown(n, now) {
			c.log.Info("node stopped posting status", "node", name, "silent", silent.Round(time.Second))
			updated, err := c.client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
			if err != nil {
				return err
			}
			node = updated
		}
	}
	if err := c.markPodsNotReady(ctx, node); err != nil {
		return err
	}
	taints, changed := reconcileTaints(node, now)
	if !changed {
		return nil
	}
	n := node.DeepCopy()
	n.Spec.Taints = taints
	_, err := c.client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	return err
}
