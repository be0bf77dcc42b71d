package tainteviction

import (
	"context"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// name is kube's name for the controller.
const name = "taint-eviction-controller"

// Controller evicts pods from NoExecute-tainted nodes; see the package
// documentation.
type Controller struct {
	cfg    Config
	log    *slog.Logger
	client kubernetes.Interface
	events record.EventRecorder
	pods   cache.Indexer
	nodes  cache.Indexer
	queue  workqueue.TypedRateLimitingInterface[string]
	synced []cache.InformerSynced

	mu sync.Mutex // guards firstSeen
	// firstSeen is when this term first saw each taint with no timeAdded,
	// by node name and taint key.
	firstSeen map[string]map[string]time.Time
}

// New builds the term's controller; cfg must be valid.
func New(kc *kit.Context, cfg Config) kit.Controller {
	c := &Controller{cfg: cfg, log: kc.Log.With("controller", name), client: kc.Client(name),
		events: kc.Recorder(name), firstSeen: make(map[string]map[string]time.Time),
		queue: kit.NewQueue(kc, name, cfg.Limiter())}
	pods, err := kc.Informers.PodsByNode()
	if err != nil {
		c.log.Error("pod index", "err", err) // a programming error
	}
	nodes := kc.Informers.Nodes()
	c.pods, c.nodes = pods.GetIndexer(), nodes.GetIndexer()
	pr, _ := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueuePod,
		UpdateFunc: func(_, obj any) { c.enqueuePod(obj) },
	})
	nr, _ := nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.nodeChanged,
		UpdateFunc: func(old, obj any) {
			o, ok1 := old.(*corev1.Node)
			n, ok2 := obj.(*corev1.Node)
			if ok1 && ok2 && equality.Semantic.DeepEqual(noExecute(o), noExecute(n)) {
				return
			}
			c.nodeChanged(obj)
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if n, ok := obj.(*corev1.Node); ok {
				c.mu.Lock()
				delete(c.firstSeen, n.Name)
				c.mu.Unlock()
			}
		},
	})
	c.synced = []cache.InformerSynced{pr.HasSynced, nr.HasSynced}
	return c
}

// Name is kube's name for it.
func (c *Controller) Name() string { return name }

// Run evicts pods until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	defer c.queue.ShutDown()
	stop := context.AfterFunc(ctx, c.queue.ShutDown)
	defer stop()
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return
	}
	kit.RunWorkers(ctx, c.queue, c.cfg.Workers, c.process)
}

func (c *Controller) process(ctx context.Context, key string) {
	after, err := c.sync(ctx, key)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			c.log.Debug("pod sync failed", "pod", key, "err", err)
		}
		c.queue.AddRateLimited(key)
	case after > 0:
		c.queue.Forget(key)
		c.queue.AddAfter(key, after)
	default:
		c.queue.Forget(key)
	}
}

func (c *Controller) enqueuePod(obj any) {
	if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
		if key, err := cache.MetaNamespaceKeyFunc(p); err == nil {
			c.queue.Add(key)
		}
	}
}

// nodeChanged enqueues the pods of a node whose NoExecute taints changed.
func (c *Controller) nodeChanged(obj any) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return
	}
	c.noteTaints(n)
	pods, _ := c.pods.ByIndex(kit.PodNodeIndex, n.Name)
	for _, p := range pods {
		c.enqueuePod(p)
	}
}

// noteTaints records when this term first saw n's NoExecute taints that
// have no timeAdded, and forgets those that went.
func (c *Controller) noteTaints(n *corev1.Node) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := c.firstSeen[n.Name]
	next := make(map[string]time.Time)
	for _, t := range noExecute(n) {
		if t.TimeAdded != nil {
			continue
		}
		if at, ok := seen[t.Key]; ok {
			next[t.Key] = at
		} else {
			next[t.Key] = now
		}
	}
	if len(next) == 0 {
		delete(c.firstSeen, n.Name)
		return
	}
	c.firstSeen[n.Name] = next
}

// added is when taint t of node was added.
func (c *Controller) added(node string) func(*corev1.Taint) time.Time {
	return func(t *corev1.Taint) time.Time {
		if t.TimeAdded != nil {
			return t.TimeAdded.Time
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if at, ok := c.firstSeen[node][t.Key]; ok {
			return at
		}
		return time.Now()
	}
}

// sync evicts the pod at key if it is due, or says when to look again.
func (c *Controller) sync(ctx context.Context, key string) (time.Duration, error) {
	obj, exists, _ := c.pods.GetByKey(key)
	if !exists {
		return 0, nil
	}
	pod := obj.(*corev1.Pod)
	if pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil {
		return 0, nil
	}
	nobj, exists, _ := c.nodes.GetByKey(pod.Spec.NodeName)
	if !exists {
		return 0, nil // the pod GC's business
	}
	taints := noExecute(nobj.(*corev1.Node))
	if len(taints) == 0 {
		return 0, nil
	}
	at, evict := evictAt(pod, taints, c.added(pod.Spec.NodeName))
	if !evict {
		return 0, nil
	}
	if left := time.Until(at); left > 0 {
		return left, nil
	}
	return 0, c.evict(ctx, pod)
}

// evict marks pod with the DisruptionTarget condition and deletes it.
func (c *Controller) evict(ctx context.Context, cached *corev1.Pod) error {
	c.events.Eventf(cached, corev1.EventTypeNormal, "TaintManagerEviction", "Marking for deletion Pod %s/%s",
		cached.Namespace, cached.Name)
	pods := c.client.CoreV1().Pods(cached.Namespace)
	pod, err := pods.Get(ctx, cached.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || err == nil && (pod.UID != cached.UID || pod.DeletionTimestamp != nil) {
		return nil // gone, replaced or already being deleted
	}
	if err != nil {
		return err
	}
	if setCondition(&pod.Status, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		ObservedGeneration: pod.Generation, Reason: "DeletionByTaintManager",
		Message: "Taint manager: deleting due to NoExecute taint"}) {
		if pod, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
			return ignoreNotFound(err)
		}
	}
	c.log.Info("deleting a pod from a NoExecute-tainted node", "pod", pod.Namespace+"/"+pod.Name, "node", pod.Spec.NodeName)
	return ignoreNotFound(pods.Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(pod.UID))}))
}

// setCondition sets cond in st and reports whether it changed anything
// but the transition time.
func setCondition(st *corev1.PodStatus, cond corev1.PodCondition) bool {
	cond.LastTransitionTime = metav1.Now()
	for i := range st.Conditions {
		cur := &st.Conditions[i]
		if cur.Type != cond.Type {
			continue
		}
		if cur.Status == cond.Status {
			if cur.Reason == cond.Reason && cur.Message == cond.Message && cur.ObservedGeneration == cond.ObservedGeneration {
				return false
			}
			cond.LastTransitionTime = cur.LastTransitionTime
		}
		*cur = cond
		return true
	}
	st.Conditions = append(st.Conditions, cond)
	return true
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
