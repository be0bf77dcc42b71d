package replicaset

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/litek8s/litek8s/internal/controllers/kit"
	"github.com/litek8s/litek8s/internal/controllers/workload"
)

// Name is kube's name of the controller; its writes use it as client name.
const Name = "replicaset-controller"

// Config configures the controller. Start from DefaultConfig.
type Config struct {
	// LoopConfig: Workers is the number of ReplicaSets synced at once
	// (kube's --concurrent-replicaset-syncs); RetryBase and RetryMax bound
	// the per-ReplicaSet backoff of failed syncs.
	kit.LoopConfig
	// BurstReplicas is the most pods created or deleted in one sync.
	BurstReplicas int
}

// DefaultConfig returns kube's defaults.
func DefaultConfig() Config {
	return Config{LoopConfig: kit.DefaultLoopConfig(5), BurstReplicas: 500}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if err := c.LoopConfig.Validate(); err != nil {
		return fmt.Errorf("replicaset: %w", err)
	}
	if c.BurstReplicas <= 0 {
		return errors.New("replicaset: BurstReplicas must be positive")
	}
	return nil
}

type controller struct {
	cfg    Config
	client kubernetes.Interface
	events record.EventRecorder
	src    *source
	pods   corelisters.PodLister
	exp    *workload.Expectations
	loop   *kit.Loop
	log    *slog.Logger
}

// New builds the term's ReplicaSet controller on kc's informers.
func New(kc *kit.Context, cfg Config) kit.Controller {
	return newController(kc, cfg, replicaSets(kc))
}

func newController(kc *kit.Context, cfg Config, src *source) *controller {
	c := &controller{cfg: cfg, client: kc.Client(src.name), events: kc.Recorder(src.name), src: src,
		pods: corelisters.NewPodLister(kc.Informers.Pods().GetIndexer()),
		exp:  workload.NewExpectations(), log: kc.Log.With("controller", src.name)}
	c.loop = kit.NewLoop(kc, src.name, cfg.LoopConfig, c.sync)
	src.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.Enqueue,
		UpdateFunc: func(_, obj any) { c.loop.Enqueue(obj) },
		DeleteFunc: func(obj any) {
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				c.exp.Forget(key)
				c.loop.Queue.Add(key)
			}
		},
	})
	kc.Informers.Pods().AddEventHandler((&workload.PodEvents{Owner: c.owner, Orphan: c.enqueueMatching,
		Created: c.exp.CreationObserved, Deleted: c.exp.DeletionObserved, Enqueue: c.loop.Queue.Add}).Handler())
	return c
}

func (c *controller) Name() string { return c.src.short }

func (c *controller) Run(ctx context.Context) { c.loop.Run(ctx) }

// owner returns the key of the ReplicaSet that controls pod ("" if none
// of the cache's ReplicaSets does).
func (c *controller) owner(pod *corev1.Pod) string {
	ref := metav1.GetControllerOfNoCopy(pod)
	kind := c.src.kind
	if ref == nil || ref.Kind != kind.Kind || ref.APIVersion != kind.GroupVersion().String() {
		return ""
	}
	rs, err := c.src.get(pod.Namespace, ref.Name)
	if err != nil || rs.UID != ref.UID {
		return ""
	}
	return pod.Namespace + "/" + rs.Name
}

// enqueueMatching enqueues the ReplicaSets whose selector matches an
// orphan pod: one of them may adopt it.
func (c *controller) enqueueMatching(pod *corev1.Pod) {
	rss, _ := c.src.list(pod.Namespace)
	workload.EnqueueSelecting(rss, func(rs *appsv1.ReplicaSet) *metav1.LabelSelector { return rs.Spec.Selector }, pod.Labels, c.loop.Enqueue)
}
