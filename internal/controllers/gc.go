package controllers

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/workqueue"

	"github.com/litek8s/litek8s/internal/controllers/kit"
	"github.com/litek8s/litek8s/internal/kv"
)

// gcName is kube's name for the garbage collector (its client's
// User-Agent suffix).
const gcName = "generic-garbage-collector"

// crdResource is the resource whose changes change the served resources.
var crdResource = schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}

// gc is the garbage collector of one leadership term, kube's
// GarbageCollector: an informer ("monitor") per served resource, all
// following one watch of the store, feeds the ownership graph, which
// queues the objects to look at; workers decide on the live objects
// (gc_work.go) and act through the API (gc_write.go).
//
// Concurrency: run owns every goroutine of the term (its own, which runs
// the monitors, the workers, the queues' own) and returns when all have
// stopped. The graph and the resource maps have their own locks; monitors
// belongs to run's goroutine.
type gc struct {
	cfg       Config
	store     Store
	client    dynamic.Interface
	resources Resources
	stats     *counters
	log       *slog.Logger

	graph           *graph
	deleteQ, orphan workqueue.TypedRateLimitingInterface[objRef]
	kick            chan struct{} // a CRD changed: look at the resources again

	mu sync.RWMutex // guards byKey, byKind, crdKey
	// byKey: the served resources by store key; byKind: by group and
	// kind, kept for the whole term (an owner whose CRD went away is still
	// looked up, and found gone, in the store).
	byKey  map[string]Resource
	byKind map[schema.GroupKind]Resource
	crdKey string

	monitors *informers // run's goroutine only
}

// gcQueues are kube's names of the garbage collector's queues
// (workqueue_*{name}).
const (
	gcDeleteQueue = "garbage_collector_attempt_to_delete"
	gcOrphanQueue = "garbage_collector_attempt_to_orphan"
)

func newGC(opts Options, client dynamic.Interface, stats *counters, queues *kit.QueueMetrics, log *slog.Logger) *gc {
	cfg := opts.Config
	limiter := func() workqueue.TypedRateLimiter[objRef] {
		return workqueue.NewTypedItemExponentialFailureRateLimiter[objRef](cfg.RetryBaseDelay, cfg.RetryMaxDelay)
	}
	g := &gc{cfg: cfg, store: opts.Store, client: client, resources: opts.Resources, stats: stats,
		log:     log.With("controller", gcName),
		deleteQ: workqueue.NewTypedRateLimitingQueueWithConfig(limiter(), kit.QueueConfig[objRef](queues, gcDeleteQueue)),
		orphan:  workqueue.NewTypedRateLimitingQueueWithConfig(limiter(), kit.QueueConfig[objRef](queues, gcOrphanQueue)),
		kick:    make(chan struct{}, 1),
		byKey:   make(map[string]Resource),
		byKind:  make(map[schema.GroupKind]Resource)}
	g.monitors = newInformers(g.store, g.handle, &stats.gcResyncs, cfg.RelistDelay, g.log)
	g.graph = newGraph(g.owner)
	return g
}

// owner reads the live object that dep's reference r names from the local
// store (the graph's lookup): nil when there is none with r's uid, when
// r's kind is not served, or when dep is cluster-scoped and r namespaced
// (which attemptToDelete reports).
func (g *gc) owner(dep objRef, r ownerRef) *kv.Object {
	res, ok := g.kind(r.groupKind())
	if !ok {
		return nil
	}
	key := kv.Key{Resource: res.StoreKey, Name: r.Name}
	if res.Namespaced {
		if dep.Key.Namespace == "" {
			return nil
		}
		key.Namespace = dep.Key.Namespace
	}
	// A local read: it does not wait, and is never older than the events
	// the graph was given.
	obj, _, err := g.store.Get(context.Background(), key, false)
	if err != nil || obj.UID != r.UID {
		return nil
	}
	return obj
}

// run collects garbage until ctx ends, then stops everything it started.
func (g *gc) run(ctx context.Context) {
	var wg sync.WaitGroup
	defer func() {
		g.deleteQ.ShutDown()
		g.orphan.ShutDown()
		g.monitors.Stop()
		wg.Wait()
	}()
	// The workers start once every resource was listed: only then does an
	// owner missing from the graph mean an owner missing from the store.
	g.syncMonitors(ctx)
	if !g.monitors.Watch(ctx) {
		return
	}
	g.enqueue(g.graph.scan())
	for range g.cfg.GCWorkers {
		wg.Go(func() {
			for g.next(ctx, g.deleteQ, g.attemptToDelete) {
			}
		})
	}
	wg.Go(func() {
		for g.next(ctx, g.orphan, g.attemptToOrphan) {
		}
	})
	t := time.NewTicker(g.cfg.ResourcesInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-g.monitors.Ready():
			if !g.monitors.Take(ctx) {
				return
			}
			continue
		case <-t.C:
		case <-g.kick:
		}
		g.syncMonitors(ctx)
	}
}

// syncMonitors follows every served resource not followed yet, and stops
// following those no longer served; their objects leave the graph as
// deletions (their dependents are looked at).
func (g *gc) syncMonitors(ctx context.Context) {
	rs := g.resources(ctx)
	if ctx.Err() != nil {
		return
	}
	want := g.learn(rs)
	for key := range want {
		if g.monitors.has(key) {
			continue
		}
		if err := g.monitors.add(ctx, key); err != nil {
			if ctx.Err() == nil && !errors.Is(err, kv.ErrClosed) {
				g.log.Warn("garbage collector cannot list a resource; trying again later", "resource", key, "err", err)
			}
			continue
		}
	}
	for _, key := range g.monitors.resources() {
		if want[key] {
			continue
		}
		g.monitors.remove(key, func(obj *kv.Object) {
			g.handle(kv.Event{Type: kv.Deleted, Object: obj, Prev: obj})
		})
	}
}

// learn records the served resources rs and returns their store keys.
func (g *gc) learn(rs []Resource) map[string]bool {
	want := make(map[string]bool, len(rs))
	g.mu.Lock()
	defer g.mu.Unlock()
	clear(g.byKey)
	for _, r := range rs {
		want[r.StoreKey] = true
		g.byKey[r.StoreKey] = r
		g.byKind[schema.GroupKind{Group: r.GVR.Group, Kind: r.Kind}] = r
		if r.GVR.GroupResource() == crdResource {
			g.crdKey = r.StoreKey
		}
	}
	return want
}

// handle takes one change from an informer.
func (g *gc) handle(ev kv.Event) {
	g.enqueue(g.graph.apply(ev))
	g.mu.RLock()
	crd := ev.Object.Key.Resource == g.crdKey
	g.mu.RUnlock()
	if crd {
		select {
		case g.kick <- struct{}{}:
		default:
		}
	}
}

func (g *gc) enqueue(w work) {
	for _, r := range w.del {
		g.deleteQ.Add(r)
	}
	for _, r := range w.orphan {
		g.orphan.Add(r)
	}
}

// next processes one item of q with fn; false when the worker should stop.
func (g *gc) next(ctx context.Context, q workqueue.TypedRateLimitingInterface[objRef],
	fn func(context.Context, objRef) error) bool {
	it, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(it)
	if ctx.Err() != nil {
		return false
	}
	err := fn(ctx, it)
	switch {
	case err == nil:
		q.Forget(it)
	case ctx.Err() != nil:
		return false
	default:
		level := slog.LevelDebug // conflicts and races with other writers are routine
		if q.NumRequeues(it) >= 5 {
			level = slog.LevelWarn
		}
		g.log.Log(ctx, level, "garbage collector will retry", "object", it.Key.String(), "err", err)
		q.AddRateLimited(it)
	}
	return true
}

// resource returns the served resource at store key, and the one of kind.
func (g *gc) resource(storeKey string) (Resource, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	r, ok := g.byKey[storeKey]
	return r, ok
}

func (g *gc) kind(gk schema.GroupKind) (Resource, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	r, ok := g.byKind[gk]
	return r, ok
}
