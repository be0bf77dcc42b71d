package endpoints

import (
	"context"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// serviceQueue is what both controllers share: a queue of service keys
// fed by service and pod events, and the workers that sync them.
type serviceQueue struct {
	cfg      Config
	log      *slog.Logger
	services corelisters.ServiceLister
	pods     corelisters.PodLister
	queue    workqueue.TypedRateLimitingInterface[string]
	sync     func(ctx context.Context, key string) error
}

func newServiceQueue(kc *kit.Context, cfg Config, name string, sync func(context.Context, string) error) *serviceQueue {
	svcInf, podInf := kc.Informers.Services(), kc.Informers.Pods()
	q := &serviceQueue{cfg: cfg, log: kc.Log.With("controller", name), sync: sync,
		services: corelisters.NewServiceLister(svcInf.GetIndexer()),
		pods:     corelisters.NewPodLister(podInf.GetIndexer()),
		queue:    kit.NewQueue(kc, name, cfg.Limiter())}
	svcInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    q.enqueue,
		UpdateFunc: func(_, obj any) { q.enqueue(obj) },
		DeleteFunc: q.enqueue,
	})
	podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { q.enqueueFor(asPod(obj)) },
		UpdateFunc: func(old, cur any) {
			o, c := asPod(old), asPod(cur)
			if o == nil || c == nil || o.ResourceVersion == c.ResourceVersion {
				return
			}
			q.enqueueFor(c)
			if !labels.Equals(o.Labels, c.Labels) {
				q.enqueueFor(o)
			}
		},
		DeleteFunc: func(obj any) { q.enqueueFor(asPod(obj)) },
	})
	return q
}

// enqueue queues a service (or a tombstone of one).
func (q *serviceQueue) enqueue(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		q.queue.Add(key)
	}
}

// enqueueFor queues the services whose selector matches pod.
func (q *serviceQueue) enqueueFor(pod *corev1.Pod) {
	if pod == nil {
		return
	}
	svcs, err := q.services.Services(pod.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	set := labels.Set(pod.Labels)
	for _, svc := range svcs {
		if svc.Spec.Selector != nil && labels.SelectorFromValidatedSet(svc.Spec.Selector).Matches(set) {
			q.queue.Add(svc.Namespace + "/" + svc.Name)
		}
	}
}

func asPod(obj any) *corev1.Pod {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, _ := obj.(*corev1.Pod)
	return pod
}

// run runs the workers until ctx ends and returns once they stopped.
func (q *serviceQueue) run(ctx context.Context) {
	kit.RunWorkers(ctx, q.queue, q.cfg.Workers, q.process)
}

func (q *serviceQueue) process(ctx context.Context, key string) {
	err := q.sync(ctx, key)
	switch {
	case ctx.Err() != nil:
	case err == nil:
		q.queue.Forget(key)
	default:
		level := slog.LevelDebug // conflicts with a cache a step behind are routine
		if q.queue.NumRequeues(key) >= 5 && !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
			level = slog.LevelWarn
		}
		q.log.Log(ctx, level, "syncing a service's endpoints failed, will retry", "service", key, "err", err)
		q.queue.AddRateLimited(key)
	}
}

// selected returns the service at key when its endpoints are managed
// (it has a selector and is not an ExternalName), else nil; gone reports
// that it does not exist.
func (q *serviceQueue) selected(key string) (svc *corev1.Service, gone bool, err error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil, false, err
	}
	svc, err = q.services.Services(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	if svc.Spec.Selector == nil || svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil, false, nil
	}
	return svc, false, nil
}

// backing returns the pods matching svc's selector.
func (q *serviceQueue) backing(svc *corev1.Service) ([]*corev1.Pod, error) {
	return q.pods.Pods(svc.Namespace).List(labels.SelectorFromValidatedSet(svc.Spec.Selector))
}

// namespaceTerminating: a create refused because the namespace is being
// deleted; it will keep failing, and the service will go.
func namespaceTerminating(err error) bool {
	return apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
}
