package simnode

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// name is the controller's name (its client's User-Agent suffix).
const name = "simnode"

// leaseNamespace holds the nodes' Leases.
const leaseNamespace = corev1.NamespaceNodeLease

// SimNodes runs the simulated nodes; see the package documentation.
type SimNodes struct {
	cfg    Config
	log    *slog.Logger
	client kubernetes.Interface
	nodes  cache.Indexer
	leases cache.Indexer
	pods   cache.Indexer
	// index is each simulated node's number, by name (read-only).
	index  map[string]int
	podQ   workqueue.TypedRateLimitingInterface[string]
	nodeQ  workqueue.TypedRateLimitingInterface[string]
	ips    *ipAllocator
	synced []cache.InformerSynced
}

// New builds the term's simulated nodes; cfg must be valid. With Count 0
// it returns a controller that does nothing.
func New(kc *kit.Context, cfg Config) kit.Controller {
	s := &SimNodes{cfg: cfg, log: kc.Log.With("controller", name), index: make(map[string]int, cfg.Count)}
	if cfg.Count == 0 {
		return s
	}
	for i := range cfg.Count {
		s.index[cfg.NamePrefix+strconv.Itoa(i)] = i
	}
	s.client = kc.Client(name)
	limiter := func() workqueue.TypedRateLimiter[string] {
		return workqueue.NewTypedItemExponentialFailureRateLimiter[string](20*time.Millisecond, 10*time.Second)
	}
	s.podQ = kit.NewQueue(kc, name+"-pods", limiter())
	s.nodeQ = kit.NewQueue(kc, name+"-nodes", limiter())
	pods, err := kc.Informers.PodsByNode()
	if err != nil {
		s.log.Error("pod index", "err", err) // a programming error
	}
	s.pods = pods.GetIndexer()
	s.ips = newIPAllocator(s.pods)
	nodes, leases := kc.Informers.Nodes(), kc.Informers.Leases()
	s.nodes, s.leases = nodes.GetIndexer(), leases.GetIndexer()
	pr, _ := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    s.enqueuePod,
		UpdateFunc: func(_, obj any) { s.enqueuePod(obj) },
		DeleteFunc: s.podDeleted,
	})
	s.synced = []cache.InformerSynced{pr.HasSynced, nodes.HasSynced, leases.HasSynced}
	return s
}

// Name is the controller's name.
func (s *SimNodes) Name() string { return name }

// Run registers the nodes, renews their leases and serves their pods
// until ctx ends.
func (s *SimNodes) Run(ctx context.Context) {
	if s.cfg.Count == 0 {
		return
	}
	defer s.podQ.ShutDown()
	defer s.nodeQ.ShutDown()
	stop := context.AfterFunc(ctx, func() { s.podQ.ShutDown(); s.nodeQ.ShutDown() })
	defer stop()
	if !cache.WaitForCacheSync(ctx.Done(), s.synced...) || !s.ensureLeaseNamespace(ctx) {
		return
	}
	for n := range s.index {
		s.nodeQ.Add(n)
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { work(ctx, s.nodeQ, s.syncNode) })
	}
	for range s.cfg.Workers {
		wg.Go(func() { work(ctx, s.podQ, s.syncPod) })
	}
	wg.Wait()
}

// work serves q with sync until q shuts down: an error retries the item
// with backoff, a positive duration syncs it again after that long.
func work(ctx context.Context, q workqueue.TypedRateLimitingInterface[string], sync func(context.Context, string) (time.Duration, error)) {
	for {
		key, quit := q.Get()
		if quit {
			return
		}
		after, err := sync(ctx, key)
		switch {
		case err != nil:
			q.AddRateLimited(key)
		case after > 0:
			q.Forget(key)
			q.AddAfter(key, after)
		default:
			q.Forget(key)
		}
		q.Done(key)
	}
}

// ensureLeaseNamespace creates kube-node-lease if it is missing, retrying
// until ctx ends.
func (s *SimNodes) ensureLeaseNamespace(ctx context.Context) bool {
	for {
		_, err := s.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
			ObjectMeta: metav1.ObjectMeta{Name: leaseNamespace}}, metav1.CreateOptions{})
		if err == nil || apierrors.IsAlreadyExists(err) {
			return true
		}
		s.log.Warn("creating the lease namespace", "err", err)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Second):
		}
	}
}

func (s *SimNodes) enqueuePod(obj any) {
	if p, ok := obj.(*corev1.Pod); ok {
		if _, mine := s.index[p.Spec.NodeName]; mine {
			key, _ := cache.MetaNamespaceKeyFunc(p)
			s.podQ.Add(key)
		}
	}
}

func (s *SimNodes) podDeleted(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if p, ok := obj.(*corev1.Pod); ok {
		s.ips.release(p.Spec.NodeName, p.UID)
	}
}

// renewAfter is when a node's lease is renewed next: the interval less up
// to a fifth, so that the renewals of many nodes spread out.
func (s *SimNodes) renewAfter() time.Duration {
	return s.cfg.LeaseInterval - time.Duration(rand.Int64N(int64(s.cfg.LeaseInterval)/5+1))
}

// nodeNumber is the number of a simulated node's name.
func (s *SimNodes) nodeNumber(node string) (int, bool) {
	i, ok := s.index[node]
	return i, ok
}

// nodeIP is node i's InternalIP: 10.32.0.0/11, from .0.1 on.
func nodeIP(i int) string {
	n := i + 1
	return fmt.Sprintf("10.%d.%d.%d", 32+n>>16, n>>8&255, n&255)
}

// podCIDR is node i's pod range.
func podCIDR(i int) string { return fmt.Sprintf("10.%d.%d.0/24", 64+i/256, i%256) }

// podIP is the address host (2-254) of node i's range.
func podIP(i, host int) string {
	return strings.TrimSuffix(podCIDR(i), "0/24") + strconv.Itoa(host)
}
