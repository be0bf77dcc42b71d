package disruption

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Name is kube's name for the controller's client (its service account).
const Name = "disruption-controller"

// controllerName is kube-controller-manager's --controllers name.
const controllerName = "disruption"

type controller struct {
	cfg    Config
	client kubernetes.Interface
	events record.EventRecorder
	pdbs   policylisters.PodDisruptionBudgetLister
	pods   corelisters.PodLister
	rcs    corelisters.ReplicationControllerLister
	rss    appslisters.ReplicaSetLister
	deps   appslisters.DeploymentLister
	sets   appslisters.StatefulSetLister
	loop   *kit.Loop
	now    func() time.Time
}

// New builds the term's disruption controller on kc's informers.
func New(kc *kit.Context, cfg Config) kit.Controller {
	f := kc.Informers
	pdbInf := kit.Informer[policyv1.PodDisruptionBudget, policyv1.PodDisruptionBudgetList](f, "poddisruptionbudgets.policy")
	c := &controller{cfg: cfg, client: kc.Client(Name), events: kc.Recorder(Name), now: time.Now,
		pdbs: policylisters.NewPodDisruptionBudgetLister(pdbInf.GetIndexer()),
		pods: corelisters.NewPodLister(f.Pods().GetIndexer()),
		rcs: corelisters.NewReplicationControllerLister(kit.Informer[corev1.ReplicationController,
			corev1.ReplicationControllerList](f, "replicationcontrollers").GetIndexer()),
		rss:  appslisters.NewReplicaSetLister(f.ReplicaSets().GetIndexer()),
		deps: appslisters.NewDeploymentLister(f.Deployments().GetIndexer()),
		sets: appslisters.NewStatefulSetLister(f.StatefulSets().GetIndexer()),
	}
	c.loop = kit.NewLoop(kc, controllerName, cfg.LoopConfig, c.sync)
	pdbInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.Enqueue,
		UpdateFunc: func(_, obj any) { c.loop.Enqueue(obj) },
		DeleteFunc: c.loop.Enqueue,
	})
	f.Pods().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			c.podChanged(obj)
			if pod, ok := obj.(*corev1.Pod); ok {
				c.watchStale(pod)
			}
		},
		UpdateFunc: kit.OnUpdate(func(o, p *corev1.Pod) {
			c.podChanged(p)
			c.watchStale(p)
			if o.Namespace == p.Namespace && !sameLabels(o.Labels, p.Labels) {
				c.podChanged(o) // a budget that no longer selects it
			}
		}),
		DeleteFunc: c.podChanged,
	})
	return c
}

func (c *controller) Name() string { return controllerName }

// Run works until ctx ends.
func (c *controller) Run(ctx context.Context) { c.loop.Run(ctx) }

// podChanged queues the budgets that select the pod.
func (c *controller) podChanged(obj any) {
	pod, ok := kit.Tombstone[*corev1.Pod](obj)
	if !ok {
		return
	}
	pdbs, err := c.pdbs.GetPodPodDisruptionBudgets(pod)
	if err != nil { // none
		return
	}
	for _, pdb := range pdbs {
		c.loop.Queue.Add(pdb.Namespace + "/" + pdb.Name)
	}
}

func sameLabels(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
