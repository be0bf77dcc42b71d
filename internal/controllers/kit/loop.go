package kit

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Loop is a controller's work queue and workers: one entry per key
// (namespace/name of an object, or any string the controller chooses),
// deduplicated; a failed sync is retried with per-key exponential backoff
// (logged at debug, at warn from the fifth retry of a key on, conflicts
// excepted: a cache a step behind is routine).
type Loop struct {
	name    string
	workers int
	sync    func(ctx context.Context, key string) error
	log     *slog.Logger
	Queue   workqueue.TypedRateLimitingInterface[string]
}

// NewLoop returns the loop of controller name in the term of kc (its
// queue, named name, reports to kc.Queues); sync reconciles one key.
func NewLoop(kc *Context, name string, workers int, base, maxDelay time.Duration,
	sync func(ctx context.Context, key string) error) *Loop {
	q := NewQueue(kc, name, workqueue.NewTypedItemExponentialFailureRateLimiter[string](base, maxDelay))
	return &Loop{name: name, workers: workers, sync: sync, log: kc.Log.With("controller", name), Queue: q}
}

// Enqueue adds obj's key (tombstones included).
func (l *Loop) Enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		l.log.Warn("no key", "object", fmt.Sprintf("%T", obj), "err", err)
		return
	}
	l.Queue.Add(key)
}

// Run works until ctx ends, then shuts the queue down and waits for the
// workers.
func (l *Loop) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for range l.workers {
		wg.Go(func() {
			for l.next(ctx) {
			}
		})
	}
	<-ctx.Done()
	l.Queue.ShutDown()
	wg.Wait()
}

func (l *Loop) next(ctx context.Context) bool {
	key, quit := l.Queue.Get()
	if quit {
		return false
	}
	defer l.Queue.Done(key)
	err := l.sync(ctx, key)
	switch {
	case err == nil:
		l.Queue.Forget(key)
	case ctx.Err() != nil: // the term ended: the next leader starts over
	default:
		level := slog.LevelDebug
		if l.Queue.NumRequeues(key) >= 5 && !apierrors.IsConflict(err) {
			level = slog.LevelWarn
		}
		l.log.Log(ctx, level, "sync failed, retrying", "key", key, "err", err)
		l.Queue.AddRateLimited(key)
	}
	return true
}

// Tombstone unwraps a deleted object of type T (a pointer type) from a
// delete notification; false if it is something else.
func Tombstone[T any](obj any) (T, bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	t, ok := obj.(T)
	return t, ok
}
