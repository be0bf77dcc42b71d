package deployment

import (
	"context"
	"fmt"
	"log/slog"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/litek8s/litek8s/internal/controllers/kit"
	"github.com/litek8s/litek8s/internal/controllers/workload"
)

// Name is kube's name of the controller; its writes use it as client name.
const Name = "deployment-controller"

var (
	kind   = appsv1.SchemeGroupVersion.WithKind("Deployment")
	rsKind = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
)

// Config configures the controller. Start from DefaultConfig.
type Config struct {
	// LoopConfig: Workers is the number of Deployments synced at once
	// (kube's --concurrent-deployment-syncs); RetryBase and RetryMax bound
	// the per-Deployment backoff of failed syncs.
	kit.LoopConfig
}

// DefaultConfig returns kube's defaults.
func DefaultConfig() Config {
	return Config{LoopConfig: kit.DefaultLoopConfig(5)}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if err := c.LoopConfig.Validate(); err != nil {
		return fmt.Errorf("deployment: %w", err)
	}
	return nil
}

type controller struct {
	client   kubernetes.Interface
	events   record.EventRecorder
	dLister  appslisters.DeploymentLister
	rsLister appslisters.ReplicaSetLister
	pods     corelisters.PodLister
	loop     *kit.Loop
	log      *slog.Logger
}

// New builds the term's Deployment controller on kc's informers.
func New(kc *kit.Context, cfg Config) kit.Controller {
	c := &controller{client: kc.Client(Name), events: kc.Recorder(Name),
		dLister:  appslisters.NewDeploymentLister(kc.Informers.Deployments().GetIndexer()),
		rsLister: appslisters.NewReplicaSetLister(kc.Informers.ReplicaSets().GetIndexer()),
		pods:     corelisters.NewPodLister(kc.Informers.Pods().GetIndexer()),
		log:      kc.Log.With("controller", Name)}
	c.loop = kit.NewLoop(kc, Name, cfg.LoopConfig, c.sync)
	kc.Informers.Deployments().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.Enqueue,
		UpdateFunc: func(_, obj any) { c.loop.Enqueue(obj) },
		DeleteFunc: c.loop.Enqueue,
	})
	kc.Informers.ReplicaSets().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.rsChanged,
		UpdateFunc: func(old, cur any) {
			if o, n := old.(*appsv1.ReplicaSet), cur.(*appsv1.ReplicaSet); o.ResourceVersion != n.ResourceVersion {
				c.rsChanged(o)
				c.rsChanged(n)
			}
		},
		DeleteFunc: c.rsChanged,
	})
	// Recreate waits for the old pods to be gone.
	kc.Informers.Pods().AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: c.podDeleted})
	return c
}

func (c *controller) Name() string { return "deployment" }

func (c *controller) Run(ctx context.Context) { c.loop.Run(ctx) }

// rsChanged enqueues the Deployment that controls rs, or, for an orphan,
// those whose selector matches it (one may adopt it).
func (c *controller) rsChanged(obj any) {
	rs, ok := kit.Tombstone[*appsv1.ReplicaSet](obj)
	if !ok {
		return
	}
	if ref := metav1.GetControllerOfNoCopy(rs); ref != nil {
		if ref.Kind == kind.Kind {
			c.loop.Queue.Add(rs.Namespace + "/" + ref.Name)
		}
		return
	}
	ds, _ := c.dLister.Deployments(rs.Namespace).List(labels.Everything())
	workload.EnqueueSelecting(ds, func(d *appsv1.Deployment) *metav1.LabelSelector { return d.Spec.Selector }, rs.Labels, c.loop.Enqueue)
}

// podDeleted enqueues the Recreate Deployment whose old pod went.
func (c *controller) podDeleted(obj any) {
	pod, ok := kit.Tombstone[*corev1.Pod](obj)
	if !ok {
		return
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil || ref.Kind != rsKind.Kind {
		return
	}
	rs, err := c.rsLister.ReplicaSets(pod.Namespace).Get(ref.Name)
	if err != nil || rs.UID != ref.UID {
		return
	}
	if dref := metav1.GetControllerOfNoCopy(rs); dref != nil && dref.Kind == kind.Kind {
		if d, err := c.dLister.Deployments(rs.Namespace).Get(dref.Name); err == nil && !isRolling(d) {
			c.loop.Enqueue(d)
		}
	}
}
