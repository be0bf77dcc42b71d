package scheduler

import (
	"context"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Scheduler binds pending pods to nodes; see the package documentation.
type Scheduler struct {
	cfg      Config
	metrics  *Metrics
	log      *slog.Logger
	client   kubernetes.Interface
	recorder record.EventRecorder
	pods     cache.Indexer
	queue    workqueue.TypedRateLimitingInterface[string]
	cache    *nodeCache
	tasks    chan task // to the binders
	vols     *volumeListers
	move     chan struct{}

	mu sync.Mutex // guards the fields below
	// unschedulable are the pods that fit nowhere, waiting for a change.
	unschedulable map[string]struct{}
	// moves counts the cluster changes that retry them.
	moves uint64

	feasible []*nodeInfo // scratch of the scheduling goroutine
	// synced tell that the handlers have seen the informers' lists.
	synced []cache.InformerSynced
}

// task is a bind (node set) or an unschedulable report (fit set).
type task struct {
	key  string
	pod  *corev1.Pod
	node string
	fit  *fitError
	// start is when the attempt began (scheduler_scheduling_attempt_duration_seconds).
	start time.Time
	// wait: the pod waits for WaitForFirstConsumer claims; node is
	// written on the claims named in selectClaims instead of binding.
	wait         bool
	selectClaims []string
}

// New builds the term's scheduler; cfg must be valid; metrics are the
// member's (nil: none).
func New(kc *kit.Context, cfg Config, metrics *Metrics) kit.Controller {
	s := &Scheduler{cfg: cfg, metrics: metrics, log: kc.Log.With("controller", cfg.Name), client: kc.Client(cfg.Name),
		recorder: kc.Recorder(cfg.Name), cache: newNodeCache(), tasks: make(chan task),
		move: make(chan struct{}, 1), unschedulable: make(map[string]struct{}),
		queue: kit.NewQueue(kc, cfg.Name, workqueue.NewTypedItemExponentialFailureRateLimiter[string](cfg.BackoffBase, cfg.BackoffMax))}
	pods := kc.Informers.Pods()
	s.pods = pods.GetIndexer()
	pr, _ := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: s.addPod, UpdateFunc: s.updatePod,
		DeleteFunc: s.deletePod})
	nr, _ := kc.Informers.Nodes().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.setNode(nil, obj) },
		UpdateFunc: s.setNode,
		DeleteFunc: func(obj any) {
			if n, ok := tombstone[*corev1.Node](obj); ok {
				s.cache.setNode(n.Name, nil)
			}
		}})
	claims, volumes := kc.Informers.PersistentVolumeClaims(), kc.Informers.PersistentVolumes()
	s.vols = &volumeListers{claims: corelisters.NewPersistentVolumeClaimLister(claims.GetIndexer()),
		volumes: corelisters.NewPersistentVolumeLister(volumes.GetIndexer()),
		classes: storagelisters.NewStorageClassLister(kit.Informer[storagev1.StorageClass, storagev1.StorageClassList](
			kc.Informers, "storageclasses.storage.k8s.io").GetIndexer())}
	cr, _ := claims.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.requestMove() },
		UpdateFunc: s.updateClaim,
	})
	// A new volume may be the one a bound claim names, or one a static
	// WaitForFirstConsumer claim can use.
	vr, _ := volumes.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) { s.requestMove() }})
	s.synced = []cache.InformerSynced{pr.HasSynced, nr.HasSynced, cr.HasSynced, vr.HasSynced}
	return s
}

// updateClaim retries the waiting pods when a claim got bound or a node.
func (s *Scheduler) updateClaim(oldObj, newObj any) {
	old, _ := oldObj.(*corev1.PersistentVolumeClaim)
	c, ok := newObj.(*corev1.PersistentVolumeClaim)
	if !ok || old == nil {
		return
	}
	if old.Spec.VolumeName != c.Spec.VolumeName || old.Annotations[annBindCompleted] != c.Annotations[annBindCompleted] ||
		old.Annotations[annSelectedNode] != c.Annotations[annSelectedNode] || old.Status.Phase != c.Status.Phase {
		s.requestMove()
	}
}

// Name is kube's name for it.
func (s *Scheduler) Name() string { return s.cfg.Name }

// Run schedules until ctx ends.
func (s *Scheduler) Run(ctx context.Context) {
	defer s.queue.ShutDown()
	// Decide only once the cache holds every node and bound pod.
	if !cache.WaitForCacheSync(ctx.Done(), s.synced...) {
		return
	}
	var wg sync.WaitGroup
	for range s.cfg.Binders {
		wg.Go(func() {
			for t := range s.tasks {
				s.do(ctx, t)
			}
		})
	}
	wg.Go(func() { s.mover(ctx) })
	stop := context.AfterFunc(ctx, s.queue.ShutDown)
	defer stop()
	for s.next(ctx) {
	}
	close(s.tasks)
	wg.Wait()
}

func (s *Scheduler) next(ctx context.Context) bool {
	key, quit := s.queue.Get()
	if quit {
		return false
	}
	defer s.queue.Done(key)
	s.scheduleOne(ctx, key)
	return true
}

// scheduleOne decides where the pod at key goes and hands the result to
// the binders.
func (s *Scheduler) scheduleOne(ctx context.Context, key string) {
	obj, ok, _ := s.pods.GetByKey(key)
	pod, _ := obj.(*corev1.Pod)
	if !ok || pod == nil || !s.pending(pod) {
		s.queue.Forget(key)
		return
	}
	start := time.Now()
	p := newPodInfo(pod)
	p.vol = s.vols.volumesOf(pod)
	s.mu.Lock()
	moves := s.moves
	s.mu.Unlock()
	s.cache.mu.Lock()
	if s.cache.holds(key, pod.UID) {
		s.cache.mu.Unlock()
		return
	}
	best, fit, feasible := decide(p, s.cache.nodeList(), s.feasible)
	s.feasible = feasible
	t := task{key: key, pod: pod, fit: fit, start: start}
	if best != nil {
		t.node = best.name
		if t.wait = len(p.vol.waitingClaims()) > 0; !t.wait {
			s.cache.assume(key, p, best.name)
		}
	}
	s.cache.mu.Unlock()
	switch {
	case fit != nil:
		s.metrics.observe(s.cfg.Name, resultUnschedulable, start)
		s.park(key, moves)
	case t.wait: // until its claims are bound
		t.selectClaims = p.vol.toSelect
		s.park(key, moves)
	}
	select {
	case s.tasks <- t:
	case <-ctx.Done():
		if best != nil && !t.wait {
			s.cache.forget(key, pod.UID)
		}
	}
}

// pending tells whether pod is this scheduler's to place.
func (s *Scheduler) pending(pod *corev1.Pod) bool {
	return pod.Spec.NodeName == "" && (pod.Spec.SchedulerName == s.cfg.Name || pod.Spec.SchedulerName == "") &&
		pod.DeletionTimestamp == nil && len(pod.Spec.SchedulingGates) == 0 && !terminal(pod)
}

// park keeps an unschedulable pod until the cluster changes; when it
// already changed since the decision (moves), the pod is retried at once
// (after its backoff).
func (s *Scheduler) park(key string, moves uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.moves != moves {
		s.queue.AddRateLimited(key)
		return
	}
	s.unschedulable[key] = struct{}{}
}

// requestMove retries the unschedulable pods: a node appeared or changed,
// or an assigned pod went away.
func (s *Scheduler) requestMove() {
	s.mu.Lock()
	s.moves++
	s.mu.Unlock()
	select {
	case s.move <- struct{}{}:
	default:
	}
}

// mover requeues the unschedulable pods, with their backoff, on each
// cluster change and every FlushInterval.
func (s *Scheduler) mover(ctx context.Context) {
	t := time.NewTicker(s.cfg.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.move:
		case <-t.C:
		}
		s.mu.Lock()
		keys := s.unschedulable
		s.unschedulable = make(map[string]struct{})
		s.mu.Unlock()
		for k := range keys {
			s.queue.AddRateLimited(k)
		}
	}
}

func (s *Scheduler) addPod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	key, _ := cache.MetaNamespaceKeyFunc(pod)
	if pod.Spec.NodeName != "" {
		s.cache.setPod(key, pod)
		return
	}
	if s.pending(pod) {
		s.queue.Add(key)
	}
}

func (s *Scheduler) updatePod(oldObj, newObj any) {
	old, _ := oldObj.(*corev1.Pod)
	pod, ok := newObj.(*corev1.Pod)
	if !ok || old == nil {
		return
	}
	key, _ := cache.MetaNamespaceKeyFunc(pod)
	if pod.Spec.NodeName != "" || terminal(pod) {
		if s.cache.setPod(key, pod) {
			s.requestMove()
		}
		s.unpark(key)
		return
	}
	// A pending pod is tried again when its spec changed, not when only
	// its status did (our own Unschedulable condition, for one).
	if s.pending(pod) && (!equality.Semantic.DeepEqual(&old.Spec, &pod.Spec) || !s.pending(old)) {
		s.unpark(key)
		s.queue.Add(key)
	}
}

func (s *Scheduler) deletePod(obj any) {
	pod, ok := tombstone[*corev1.Pod](obj)
	if !ok {
		return
	}
	key, _ := cache.MetaNamespaceKeyFunc(pod)
	s.unpark(key)
	if s.cache.deletePod(key) {
		s.requestMove()
	}
}

func (s *Scheduler) unpark(key string) {
	s.mu.Lock()
	delete(s.unschedulable, key)
	s.mu.Unlock()
}

func (s *Scheduler) setNode(oldObj, newObj any) {
	old, _ := oldObj.(*corev1.Node)
	node, ok := newObj.(*corev1.Node)
	if !ok {
		return
	}
	s.cache.setNode(node.Name, node)
	if old == nil || schedulingChanged(old, node) {
		s.requestMove()
	}
}

// schedulingChanged tells whether a node update can make a pod fit.
func schedulingChanged(old, node *corev1.Node) bool {
	return old.Spec.Unschedulable != node.Spec.Unschedulable ||
		!equality.Semantic.DeepEqual(old.Spec.Taints, node.Spec.Taints) ||
		!equality.Semantic.DeepEqual(old.Labels, node.Labels) ||
		!equality.Semantic.DeepEqual(old.Status.Allocatable, node.Status.Allocatable) ||
		readyOf(old) != readyOf(node)
}

func readyOf(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return ""
}

// tombstone unwraps a deleted object.
func tombstone[T any](obj any) (T, bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	t, ok := obj.(T)
	return t, ok
}
