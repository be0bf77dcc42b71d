package daemonset

import (
	"context"
	"log/slog"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/litek8s/litek8s/internal/controllers/kit"
	"github.com/litek8s/litek8s/internal/controllers/workload"
)

// Name is kube's name of the controller; its writes use it as client name.
const Name = "daemonset-controller"

var kind = appsv1.SchemeGroupVersion.WithKind("DaemonSet")

type controller struct {
	cfg       Config
	client    kubernetes.Interface
	events    record.EventRecorder
	dsLister  appslisters.DaemonSetLister
	revisions appslisters.ControllerRevisionLister
	nodes     corelisters.NodeLister
	pods      corelisters.PodLister
	// creates and deletes are the pending creations and deletions of each
	// DaemonSet (kept apart: one sync may do both).
	creates, deletes *workload.Expectations
	// failed delays the replacement of a failed pod, per DaemonSet and
	// node (it has its own lock).
	failed *flowcontrol.Backoff
	loop   *kit.Loop
	log    *slog.Logger
}

// New builds the term's DaemonSet controller on kc's informers.
func New(kc *kit.Context, cfg Config) kit.Controller {
	dsInf := kit.Informer[appsv1.DaemonSet, appsv1.DaemonSetList](kc.Informers, "daemonsets.apps")
	revInf := kit.Informer[appsv1.ControllerRevision, appsv1.ControllerRevisionList](kc.Informers, "controllerrevisions.apps")
	c := &controller{cfg: cfg, client: kc.Client(Name), events: kc.Recorder(Name),
		dsLister:  appslisters.NewDaemonSetLister(dsInf.GetIndexer()),
		revisions: appslisters.NewControllerRevisionLister(revInf.GetIndexer()),
		nodes:     corelisters.NewNodeLister(kc.Informers.Nodes().GetIndexer()),
		pods:      corelisters.NewPodLister(kc.Informers.Pods().GetIndexer()),
		creates:   workload.NewExpectations(), deletes: workload.NewExpectations(),
		failed: flowcontrol.NewBackOff(cfg.FailedPodBackoff, cfg.FailedPodMaxBackoff),
		log:    kc.Log.With("controller", Name)}
	c.loop = kit.NewLoop(kc, Name, cfg.LoopConfig, c.sync)
	dsInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.Enqueue,
		UpdateFunc: func(_, obj any) { c.loop.Enqueue(obj) },
		DeleteFunc: func(obj any) {
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				c.creates.Forget(key)
				c.deletes.Forget(key)
				c.loop.Queue.Add(key)
			}
		},
	})
	revInf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: c.revisionDeleted})
	kc.Informers.Nodes().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { c.enqueueAll() },
		UpdateFunc: func(old, cur any) {
			o, n := old.(*corev1.Node), cur.(*corev1.Node)
			if !labels.Equals(o.Labels, n.Labels) || !apiequality.Semantic.DeepEqual(o.Spec, n.Spec) {
				c.enqueueAll()
			}
		},
		DeleteFunc: func(any) { c.enqueueAll() },
	})
	kc.Informers.Pods().AddEventHandler((&workload.PodEvents{Owner: c.owner, Orphan: c.enqueueMatching,
		Created: c.creates.CreationObserved, Deleted: c.deletes.DeletionObserved, Enqueue: c.loop.Queue.Add}).Handler())
	return c
}

func (c *controller) Name() string { return "daemonset" }

func (c *controller) Run(ctx context.Context) { c.loop.Run(ctx) }

// enqueueAll enqueues every DaemonSet: a node changed, which may change
// where each of them runs.
func (c *controller) enqueueAll() {
	dss, _ := c.dsLister.List(labels.Everything())
	for _, ds := range dss {
		c.loop.Enqueue(ds)
	}
}

// revisionDeleted enqueues the owner of a deleted ControllerRevision: a
// current revision deleted by hand is created again.
func (c *controller) revisionDeleted(obj any) {
	rev, ok := kit.Tombstone[*appsv1.ControllerRevision](obj)
	if !ok {
		return
	}
	if ref := metav1.GetControllerOfNoCopy(rev); ref != nil && ref.Kind == kind.Kind {
		c.loop.Queue.Add(rev.Namespace + "/" + ref.Name)
	}
}

// owner returns the key of the DaemonSet that controls pod ("" if none of
// the cache's DaemonSets does).
func (c *controller) owner(pod *corev1.Pod) string {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil || ref.Kind != kind.Kind || ref.APIVersion != kind.GroupVersion().String() {
		return ""
	}
	ds, err := c.dsLister.DaemonSets(pod.Namespace).Get(ref.Name)
	if err != nil || ds.UID != ref.UID {
		return ""
	}
	return pod.Namespace + "/" + ds.Name
}

// enqueueMatching enqueues the DaemonSets whose selector matches an
// orphan pod: one of them may adopt it.
func (c *controller) enqueueMatching(pod *corev1.Pod) {
	dss, _ := c.dsLister.DaemonSets(pod.Namespace).List(labels.Everything())
	workload.EnqueueSelecting(dss, func(ds *appsv1.DaemonSet) *metav1.LabelSelector { return ds.Spec.Selector }, pod.Labels, c.loop.Enqueue)
}
