package resourcequota

import (
	"context"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/litek8s/litek8s/internal/controllers/kit"
	"github.com/litek8s/litek8s/internal/quota"
)

// Name is kube's name of the controller; its writes use it as client name.
const Name = "resourcequota-controller"

type controller struct {
	cfg       Config
	client    kubernetes.Interface
	informers *kit.Informers
	quotas    corelisters.ResourceQuotaLister
	loop      *kit.Loop
	log       *slog.Logger
	now       func() time.Time

	mu      sync.Mutex // guards counted
	counted map[string]cache.SharedIndexInformer
}

// New builds the term's resourcequota controller on kc's informers.
func New(kc *kit.Context, cfg Config) kit.Controller {
	inf := kit.Informer[corev1.ResourceQuota, corev1.ResourceQuotaList](kc.Informers, "resourcequotas")
	c := &controller{cfg: cfg, client: kc.Client(Name), informers: kc.Informers,
		quotas: corelisters.NewResourceQuotaLister(inf.GetIndexer()), log: kc.Log.With("controller", Name), now: time.Now,
		counted: map[string]cache.SharedIndexInformer{quota.Pods: kc.Informers.Pods(),
			quota.Services: kc.Informers.Services(), quota.Claims: kc.Informers.PersistentVolumeClaims()}}
	c.loop = kit.NewLoop(kc, Name, cfg.LoopConfig, c.sync)
	inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.loop.Enqueue,
		UpdateFunc: func(old, cur any) {
			// Only a spec change needs a new status: status changes are the
			// admission's charges and this controller's writes.
			o, q := old.(*corev1.ResourceQuota), cur.(*corev1.ResourceQuota)
			if !quota.Equal(o.Spec.Hard, q.Spec.Hard) || !apiequality.Semantic.DeepEqual(quota.Selectors(o), quota.Selectors(q)) {
				c.loop.Enqueue(cur)
			}
		},
	})
	c.counted[quota.Pods].AddEventHandler(c.handler(quota.Pods, podChanged))
	c.counted[quota.Services].AddEventHandler(c.handler(quota.Services, serviceChanged))
	c.counted[quota.Claims].AddEventHandler(c.handler(quota.Claims, claimChanged))
	return c
}

func (c *controller) Name() string { return "resourcequota" }

// Run works until ctx ends, enqueueing every quota each ResyncPeriod.
func (c *controller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(c.cfg.ResyncPeriod)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				c.enqueueAll()
			}
		}
	})
	c.loop.Run(ctx)
	wg.Wait()
}

func (c *controller) enqueueAll() {
	qs, _ := c.quotas.List(labels.Everything())
	for _, q := range qs {
		c.loop.Enqueue(q)
	}
}

// informer returns the informer of the counted resource, starting a
// metadata informer the first time a quota names a resource without a
// typed one.
func (c *controller) informer(resource string) cache.SharedIndexInformer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if inf, ok := c.counted[resource]; ok {
		return inf
	}
	inf := c.informers.Metadata(resource)
	inf.AddEventHandler(c.handler(resource, nil))
	c.counted[resource] = inf
	return inf
}

// handler enqueues the quotas of an object's namespace that count
// resource when it is added or deleted, or when changed says that an
// update changed its usage (nil: updates never do).
func (c *controller) handler(resource string, changed func(old, cur any) bool) cache.ResourceEventHandler {
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			ns, _, _ := cache.SplitMetaNamespaceKey(key)
			c.enqueueNamespace(resource, ns)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(old, cur any) {
			if changed != nil && changed(old, cur) {
				enqueue(cur)
			}
		},
		DeleteFunc: enqueue,
	}
}

// enqueueNamespace enqueues the quotas of ns whose spec.hard names
// something the evaluator of resource counts.
func (c *controller) enqueueNamespace(resource, ns string) {
	if ns == "" {
		return
	}
	qs, _ := c.quotas.ResourceQuotas(ns).List(labels.Everything())
	for _, q := range qs {
		if len(quota.Covered(resource, q.Spec.Hard)) > 0 {
			c.loop.Enqueue(q)
		}
	}
}

// podChanged: a pod's usage changes when it becomes terminal, starts
// being deleted (it stops counting at the end of its grace period, when
// the sync that this enqueues has scheduled another), or is resized.
func podChanged(old, cur any) bool {
	o, p := old.(*corev1.Pod), cur.(*corev1.Pod)
	return terminal(o) != terminal(p) || (o.DeletionTimestamp == nil) != (p.DeletionTimestamp == nil) ||
		!apiequality.Semantic.DeepEqual(o.Spec.Containers, p.Spec.Containers)
}

func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

func serviceChanged(old, cur any) bool {
	o, s := old.(*corev1.Service), cur.(*corev1.Service)
	return o.Spec.Type != s.Spec.Type || len(o.Spec.Ports) != len(s.Spec.Ports) ||
		!apiequality.Semantic.DeepEqual(o.Spec.AllocateLoadBalancerNodePorts, s.Spec.AllocateLoadBalancerNodePorts)
}

func claimChanged(old, cur any) bool {
	o, p := old.(*corev1.PersistentVolumeClaim), cur.(*corev1.PersistentVolumeClaim)
	return !apiequality.Semantic.DeepEqual(o.Spec.Resources.Requests, p.Spec.Resources.Requests) ||
		!apiequality.Semantic.DeepEqual(o.Status.AllocatedResources, p.Status.AllocatedResources)
}
