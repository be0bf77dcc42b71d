package namespace

import (
	"context"
	"errors"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Name is kube's name for the controller (its client's User-Agent suffix).
const Name = "namespace-controller"

// Resources lists the namespaced resources the API serves now (built-in
// and custom) that can be listed and deleted.
type Resources func(ctx context.Context) []schema.GroupVersionResource

// controller is the namespace controller of one term.
type controller struct {
	cfg       Config
	resources Resources
	client    kubernetes.Interface
	dyn       dynamic.Interface
	lister    corelisters.NamespaceLister
	log       *slog.Logger
	queue     workqueue.TypedRateLimitingInterface[string]
	// recheck is the backoff of namespaces whose content is not gone yet
	// (the queue's own limiter is the backoff after failures).
	recheck workqueue.TypedRateLimiter[string]
}

// New returns the namespace controller of the term of kc; dyn is its
// dynamic client (in process, its User-Agent naming Name).
func New(kc *kit.Context, cfg Config, resources Resources, dyn dynamic.Interface) kit.Controller {
	inf := kc.Informers.Namespaces()
	c := &controller{cfg: cfg, resources: resources, client: kc.Client(Name), dyn: dyn,
		lister:  corelisters.NewNamespaceLister(inf.GetIndexer()),
		log:     kc.Log.With("controller", Name),
		queue:   kit.NewQueue(kc, Name, cfg.Limiter()),
		recheck: workqueue.NewTypedItemExponentialFailureRateLimiter[string](cfg.RecheckMin, cfg.RecheckMax)}
	inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
	})
	return c
}

func (c *controller) Name() string { return "namespace" }

// enqueue queues a namespace being deleted, after DeletionDelay.
func (c *controller) enqueue(obj any) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok || ns.DeletionTimestamp == nil {
		return
	}
	c.queue.AddAfter(ns.Name, c.cfg.DeletionDelay)
}

// Run works until ctx ends and returns once the workers have stopped.
func (c *controller) Run(ctx context.Context) { kit.RunWorkers(ctx, c.queue, c.cfg.Workers, c.process) }

// process processes one namespace.
func (c *controller) process(ctx context.Context, name string) {
	err := c.sync(ctx, name)
	var remaining *remainingError
	switch {
	case ctx.Err() != nil:
	case err == nil:
		c.queue.Forget(name)
		c.recheck.Forget(name)
	case errors.As(err, &remaining):
		c.queue.Forget(name)
		c.log.Debug("content remains in a namespace being deleted", "namespace", name, "remaining", remaining.what)
		c.queue.AddAfter(name, c.recheck.When(name))
	default:
		level := slog.LevelDebug // conflicts and races with other writers are routine
		if c.queue.NumRequeues(name) >= 5 {
			level = slog.LevelWarn
		}
		c.log.Log(ctx, level, "deleting a namespace failed, will retry", "namespace", name, "err", err)
		c.queue.AddRateLimited(name)
	}
}

// remainingError: the namespace's content is not gone yet.
type remainingError struct{ what string }

func (e *remainingError) Error() string { return "namespace: content remains: " + e.what }

// sync is kube's NamespacedResourcesDeleter.Delete: empty the namespace,
// then finalize it.
func (c *controller) sync(ctx context.Context, name string) error {
	cached, err := c.lister.Get(name)
	if apierrors.IsNotFound(err) || err == nil && cached.DeletionTimestamp == nil {
		return nil
	}
	if err != nil {
		return err
	}
	// Other writers change a namespace being deleted: start from its
	// latest state.
	ns, err := c.client.CoreV1().Namespaces().Get(ctx, name, getLatest)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if ns.DeletionTimestamp == nil || len(ns.Spec.Finalizers) == 0 {
		return nil // not being deleted, or already finalized
	}
	ns, remaining, err := c.deleteContent(ctx, ns)
	if err != nil {
		return err
	}
	if remaining != "" {
		return &remainingError{what: remaining}
	}
	return c.finalize(ctx, ns)
}
