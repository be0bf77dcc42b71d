package kit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// LoopConfig is the work-queue settings every controller's Config embeds:
// how many keys are synced at once and the per-key backoff of failed
// syncs. Its fields are promoted: a controller's Config has Workers,
// RetryBase and RetryMax.
type LoopConfig struct {
	// Workers is the number of keys synced at once (kube's
	// --concurrent-<resource>-syncs).
	Workers int
	// RetryBase and RetryMax bound the per-key exponential backoff of
	// failed syncs (kube: 5 ms to 1000 s).
	RetryBase, RetryMax time.Duration
}

// DefaultLoopConfig returns workers workers and a backoff from 5 ms to
// 30 s.
func DefaultLoopConfig(workers int) LoopConfig {
	return LoopConfig{Workers: workers, RetryBase: 5 * time.Millisecond, RetryMax: 30 * time.Second}
}

// Validate reports the first invalid setting, naming the field; the
// controller's Validate prefixes its name.
func (c LoopConfig) Validate() error {
	switch {
	case c.Workers <= 0:
		return errors.New("Workers must be positive")
	case c.RetryBase <= 0 || c.RetryMax < c.RetryBase:
		return errors.New("RetryBase must be positive and RetryMax at least RetryBase")
	}
	return nil
}

// Limiter returns the per-key exponential backoff from RetryBase to
// RetryMax.
func (c LoopConfig) Limiter() workqueue.TypedRateLimiter[string] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[string](c.RetryBase, c.RetryMax)
}

// Loop is a controller's work queue and workers: one entry per key
// (namespace/name of an object, or any string the controller chooses),
// deduplicated; a failed sync is retried with per-key exponential backoff
// (logged at debug, at warn from the fifth retry of a key on, conflicts
// excepted: a cache a step behind is routine).
type Loop struct {
	name    string
	workers int
	sync    func(ctx context.Context, key string) (*time.Duration, error)
	log     *slog.Logger
	Queue   workqueue.TypedRateLimitingInterface[string]
}

// NewLoop returns the loop of controller name in the term of kc (its
// queue, named name, reports to kc.Queues); sync reconciles one key.
func NewLoop(kc *Context, name string, cfg LoopConfig, sync func(ctx context.Context, key string) error) *Loop {
	return NewLoopAfter(kc, name, cfg, nil, func(ctx context.Context, key string) (*time.Duration, error) {
		return nil, sync(ctx, key)
	})
}

// NewLoopAfter is NewLoop for a sync that may ask to look at its key again
// after a delay (nil: only when something changes or it failed); clk
// measures the queue's delays (nil: the real clock).
func NewLoopAfter(kc *Context, name string, cfg LoopConfig, clk clock.WithTicker,
	sync func(ctx context.Context, key string) (*time.Duration, error)) *Loop {
	qc := QueueConfig[string](kc.Queues, name)
	if clk != nil {
		qc.Clock = clk
	}
	q := workqueue.NewTypedRateLimitingQueueWithConfig(cfg.Limiter(), qc)
	return &Loop{name: name, workers: cfg.Workers, sync: sync, log: kc.Log.With("controller", name), Queue: q}
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
func (l *Loop) Run(ctx context.Context) { RunWorkers(ctx, l.Queue, l.workers, l.process) }

func (l *Loop) process(ctx context.Context, key string) {
	after, err := l.sync(ctx, key)
	switch {
	case err == nil && after == nil:
		l.Queue.Forget(key)
	case ctx.Err() != nil: // the term ended: the next leader starts over
	case err != nil:
		level := slog.LevelDebug
		if l.Queue.NumRequeues(key) >= 5 && !apierrors.IsConflict(err) {
			level = slog.LevelWarn
		}
		l.log.Log(ctx, level, "sync failed, retrying", "key", key, "err", err)
		l.Queue.AddRateLimited(key)
	default:
		l.Queue.Forget(key)
		l.Queue.AddAfter(key, *after)
	}
}

// RunWorkers runs workers goroutines that take keys from q and hand each
// to process, until ctx ends; then it shuts q down and waits for them. A
// key is Done once process returned: process decides whether it is
// forgotten, retried or queued again.
func RunWorkers[T comparable](ctx context.Context, q workqueue.TypedInterface[T], workers int,
	process func(ctx context.Context, key T)) {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for next(ctx, q, process) {
			}
		})
	}
	<-ctx.Done()
	q.ShutDown()
	wg.Wait()
}

// next processes one key; false once q is shut down.
func next[T comparable](ctx context.Context, q workqueue.TypedInterface[T], process func(context.Context, T)) bool {
	key, quit := q.Get()
	if quit {
		return false
	}
	defer q.Done(key)
	process(ctx, key)
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
