package statefulset

import (
	"context"
	"log/slog"
	"time"

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
const Name = "statefulset-controller"

var (
	kind    = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	podKind = corev1.SchemeGroupVersion.WithKind("Pod")
)

type controller struct {
	client  kubernetes.Interface
	events  record.EventRecorder
	sets    appslisters.StatefulSetLister
	pods    corelisters.PodLister
	claims  corelisters.PersistentVolumeClaimLister
	revs    appslisters.ControllerRevisionLister
	written *written
	loop    *kit.Loop
	log     *slog.Logger
}

// New builds the term's StatefulSet controller on kc's informers.
func New(kc *kit.Context, cfg Config) kit.Controller {
	inf := kc.Informers
	sets, pods, claims, revs := inf.StatefulSets(), inf.Pods(), inf.PersistentVolumeClaims(), inf.ControllerRevisions()
	c := &controller{client: kc.Client(Name), events: kc.Recorder(Name),
		sets:   appslisters.NewStatefulSetLister(sets.GetIndexer()),
		pods:   corelisters.NewPodLister(pods.GetIndexer()),
		claims: corelisters.NewPersistentVolumeClaimLister(claims.GetIndexer()),
		revs:   appslisters.NewControllerRevisionLister(revs.GetIndexer()),
		written: newWritten([numResources]cache.Store{podsResource: pods.GetIndexer(), claimsResource: claims.GetIndexer(),
			setsResource: sets.GetIndexer(), revisionsResource: revs.GetIndexer()}),
		log: kc.Log.With("controller", Name)}
	c.loop = kit.NewLoop(kc, Name, cfg.LoopConfig, c.sync)
	sets.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.Enqueue,
		UpdateFunc: func(_, obj any) { c.loop.Enqueue(obj) },
		DeleteFunc: c.loop.Enqueue,
	})
	pods.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: c.addPod, UpdateFunc: kit.OnUpdate(c.updatePod), DeleteFunc: c.deletePodEvent})
	return c
}

func (c *controller) Name() string { return "statefulset" }

func (c *controller) Run(ctx context.Context) { c.loop.Run(ctx) }

// owner returns the set that controls pod per the cache (nil if none).
func (c *controller) owner(pod *corev1.Pod, ref *metav1.OwnerReference) *appsv1.StatefulSet {
	if ref == nil || ref.Kind != kind.Kind || ref.APIVersion != kind.GroupVersion().String() {
		return nil
	}
	set, err := c.sets.StatefulSets(pod.Namespace).Get(ref.Name)
	if err != nil || set.UID != ref.UID {
		return nil
	}
	return set
}

// enqueueMatching enqueues the sets whose selector matches an orphan pod.
func (c *controller) enqueueMatching(pod *corev1.Pod) {
	sets, _ := c.sets.StatefulSets(pod.Namespace).List(labels.Everything())
	workload.EnqueueSelecting(sets, func(set *appsv1.StatefulSet) *metav1.LabelSelector { return set.Spec.Selector }, pod.Labels, c.loop.Enqueue)
}

func (c *controller) addPod(obj any) {
	pod := obj.(*corev1.Pod)
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		if set := c.owner(pod, ref); set != nil {
			c.loop.Enqueue(set)
		}
		return
	}
	if pod.DeletionTimestamp == nil {
		c.enqueueMatching(pod)
	}
}

func (c *controller) updatePod(o, p *corev1.Pod) {
	oref, ref := metav1.GetControllerOfNoCopy(o), metav1.GetControllerOfNoCopy(p)
	refChanged := (oref == nil) != (ref == nil) || (ref != nil && oref.UID != ref.UID)
	if refChanged {
		if set := c.owner(o, oref); set != nil {
			c.loop.Enqueue(set)
		}
	}
	if ref != nil {
		set := c.owner(p, ref)
		if set == nil {
			return
		}
		c.loop.Enqueue(set)
		if set.Spec.MinReadySeconds > 0 && !workload.IsReady(o) && workload.IsReady(p) {
			c.loop.Queue.AddAfter(p.Namespace+"/"+set.Name, time.Duration(set.Spec.MinReadySeconds)*time.Second)
		}
		return
	}
	if refChanged || !labels.Equals(o.Labels, p.Labels) {
		c.enqueueMatching(p)
	}
}

func (c *controller) deletePodEvent(obj any) {
	pod, ok := kit.Tombstone[*corev1.Pod](obj)
	if !ok {
		return
	}
	if set := c.owner(pod, metav1.GetControllerOfNoCopy(pod)); set != nil {
		c.loop.Enqueue(set)
	}
}
