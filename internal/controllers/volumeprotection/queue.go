package volumeprotection

import (
	"context"
	"log/slog"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// worker is a queue of object keys and the workers that process them.
type worker struct {
	cfg   Config
	log   *slog.Logger
	queue workqueue.TypedRateLimitingInterface[string]
	sync  func(ctx context.Context, key string) error
}

func newWorker(kc *kit.Context, cfg Config, name string, sync func(context.Context, string) error) *worker {
	return &worker{cfg: cfg, log: kc.Log.With("controller", name), sync: sync,
		queue: kit.NewQueue(kc, name, cfg.Limiter())}
}

// enqueue queues an object (or a tombstone of one).
func (w *worker) enqueue(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		w.queue.Add(key)
	}
}

// run runs the workers until ctx ends and returns once they stopped.
func (w *worker) run(ctx context.Context) { kit.RunWorkers(ctx, w.queue, w.cfg.Workers, w.process) }

func (w *worker) process(ctx context.Context, key string) {
	err := w.sync(ctx, key)
	switch {
	case ctx.Err() != nil:
	case err == nil:
		w.queue.Forget(key)
	default:
		level := slog.LevelDebug // conflicts with a cache a step behind are routine
		if w.queue.NumRequeues(key) >= 5 && !apierrors.IsConflict(err) {
			level = slog.LevelWarn
		}
		w.log.Log(ctx, level, "will retry", "object", key, "err", err)
		w.queue.AddRateLimited(key)
	}
}

// candidate: being deleted, and still held by finalizer.
func candidate(deleting bool, finalizers []string, finalizer string) bool {
	return deleting && slices.Contains(finalizers, finalizer)
}

// lacks: not being deleted, and without finalizer.
func lacks(deleting bool, finalizers []string, finalizer string) bool {
	return !deleting && !slices.Contains(finalizers, finalizer)
}

// without returns fs less f.
func without(fs []string, f string) []string {
	return slices.DeleteFunc(slices.Clone(fs), func(s string) bool { return s == f })
}
