package kit

import (
	"context"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/litek8s/litek8s/internal/kv"
)

// Informers are the shared informers of one term, one per resource:
// controllers that watch the same resource share its cache and its feed
// watch.
type Informers struct {
	store   Store
	resyncs *atomic.Uint64

	mu      sync.Mutex // guards the fields below
	byKey   map[string]cache.SharedIndexInformer
	started context.Context // set by Start; informers added later start at once
	wg      sync.WaitGroup
}

// NewInformers returns an empty set reading store; resyncs counts the
// relists of informers that fell behind the change feed.
func NewInformers(store Store, resyncs *atomic.Uint64) *Informers {
	return &Informers{store: store, resyncs: resyncs, byKey: make(map[string]cache.SharedIndexInformer)}
}

// Informer returns the shared informer of resource (the store's name for
// it: "pods", "deployments.apps"), whose objects are T (a k8s.io/api type)
// and whose lists are L.
func Informer[T, L any, PT interface {
	*T
	runtime.Object
}, PL interface {
	*L
	runtime.Object
}](f *Informers, resource string) cache.SharedIndexInformer {
	return filtered[T, L, PT, PL](f, resource, "", nil)
}

// Named returns the shared informer of the objects of resource named
// name (in every namespace), whose objects are T and lists L: the others
// are skipped by key, never decoded or cached (kube's informers with the
// field selector metadata.name=name).
func Named[T, L any, PT interface {
	*T
	runtime.Object
}, PL interface {
	*L
	runtime.Object
}](f *Informers, resource, name string) cache.SharedIndexInformer {
	return filtered[T, L, PT, PL](f, resource, "metadata.name="+name, func(k kv.Key) bool { return k.Name == name })
}

// filtered returns the informer of resource limited by keep, shared under
// the key resource + "?" + selector.
func filtered[T, L any, PT interface {
	*T
	runtime.Object
}, PL interface {
	*L
	runtime.Object
}](f *Informers, resource, selector string, keep func(kv.Key) bool) cache.SharedIndexInformer {
	key := resource
	if selector != "" {
		key += "?" + selector
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if inf, ok := f.byKey[key]; ok {
		return inf
	}
	lw := &listWatch{store: f.store, resource: resource, resyncs: f.resyncs, keep: keep,
		newObj:  func() runtime.Object { return PT(new(T)) },
		newList: func() runtime.Object { return PL(new(L)) }}
	inf := cache.NewSharedIndexInformerWithOptions(lw, PT(new(T)), cache.SharedIndexInformerOptions{
		Indexers:          cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		ObjectDescription: resource,
	})
	f.byKey[key] = inf
	if f.started != nil {
		f.run(f.started, inf)
	}
	return inf
}

// Start runs every informer asked for so far (and, from now on, every new
// one) until ctx ends.
func (f *Informers) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = ctx
	for _, inf := range f.byKey {
		f.run(ctx, inf)
	}
}

func (f *Informers) run(ctx context.Context, inf cache.SharedIndexInformer) {
	f.wg.Go(func() { inf.RunWithContext(ctx) })
}

// WaitForSync waits until every informer asked for so far has listed; false
// if ctx ended first.
func (f *Informers) WaitForSync(ctx context.Context) bool {
	f.mu.Lock()
	synced := make([]cache.InformerSynced, 0, len(f.byKey))
	for _, inf := range f.byKey {
		synced = append(synced, inf.HasSynced)
	}
	f.mu.Unlock()
	return cache.WaitForCacheSync(ctx.Done(), synced...)
}

// Wait waits for the informers' goroutines after the Start context ended.
func (f *Informers) Wait() { f.wg.Wait() }

// Metadata returns the shared informer of the objects of resource (any
// resource, custom ones included) as metav1.PartialObjectMetadata: for
// controllers that only count or key them (kube's metadata informers).
// It is shared apart from the typed informer of the same resource.
func (f *Informers) Metadata(resource string) cache.SharedIndexInformer {
	return filtered[metav1.PartialObjectMetadata, metav1.PartialObjectMetadataList](f, resource, "as=metadata", nil)
}
