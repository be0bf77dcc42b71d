package pvbinder

import (
	"context"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Name is kube's name for the controller's client (its service account).
const Name = "persistent-volume-binder"

// controllerName is kube-controller-manager's --controllers name.
const controllerName = "persistentvolume-binder"

// Queue key prefixes.
const (
	claimPrefix  = "claim/"
	volumePrefix = "volume/"
)

type controller struct {
	cfg     Config
	client  kubernetes.Interface
	events  record.EventRecorder
	claims  corelisters.PersistentVolumeClaimLister
	volumes corelisters.PersistentVolumeLister
	classes storagelisters.StorageClassLister
	nodes   corelisters.NodeLister
	loop    *kit.Loop
	now     func() time.Time
}

// New builds the term's binder on kc's informers.
func New(kc *kit.Context, cfg Config) kit.Controller {
	f := kc.Informers
	pvcInf, pvInf := f.PersistentVolumeClaims(), f.PersistentVolumes()
	c := &controller{cfg: cfg, client: kc.Client(Name), events: kc.Recorder(Name),
		claims:  corelisters.NewPersistentVolumeClaimLister(pvcInf.GetIndexer()),
		volumes: corelisters.NewPersistentVolumeLister(pvInf.GetIndexer()),
		classes: storagelisters.NewStorageClassLister(StorageClasses(f).GetIndexer()),
		nodes:   corelisters.NewNodeLister(f.Nodes().GetIndexer()), now: time.Now}
	c.loop = kit.NewLoop(kc, controllerName, cfg.LoopConfig, c.sync)
	pvcInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueClaim,
		UpdateFunc: func(_, obj any) { c.enqueueClaim(obj) },
		DeleteFunc: c.claimDeleted,
	})
	pvInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.volumeChanged,
		UpdateFunc: func(_, obj any) { c.volumeChanged(obj) },
		DeleteFunc: c.volumeDeleted,
	})
	return c
}

// StorageClasses is the term's shared StorageClass informer.
func StorageClasses(f *kit.Informers) cache.SharedIndexInformer {
	return kit.Informer[storagev1.StorageClass, storagev1.StorageClassList](f, "storageclasses.storage.k8s.io")
}

func (c *controller) Name() string { return controllerName }

// Run works until ctx ends; every Resync it queues everything again.
func (c *controller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { c.loop.Run(ctx) })
	t := time.NewTicker(c.cfg.Resync)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-t.C:
			c.resync()
		}
	}
}

func (c *controller) resync() {
	claims, _ := c.claims.List(labels.Everything())
	for _, pvc := range claims {
		c.loop.Queue.Add(claimPrefix + pvc.Namespace + "/" + pvc.Name)
	}
	vols, _ := c.volumes.List(labels.Everything())
	for _, pv := range vols {
		c.loop.Queue.Add(volumePrefix + pv.Name)
	}
}

func (c *controller) enqueueClaim(obj any) {
	if pvc, ok := kit.Tombstone[*corev1.PersistentVolumeClaim](obj); ok {
		c.loop.Queue.Add(claimPrefix + pvc.Namespace + "/" + pvc.Name)
	}
}

// claimDeleted: the volume bound to the claim is released.
func (c *controller) claimDeleted(obj any) {
	if pvc, ok := kit.Tombstone[*corev1.PersistentVolumeClaim](obj); ok && pvc.Spec.VolumeName != "" {
		c.loop.Queue.Add(volumePrefix + pvc.Spec.VolumeName)
	}
}

// volumeChanged queues the volume, the claim it names, and, when it is
// free, the pending claims that may want it.
func (c *controller) volumeChanged(obj any) {
	pv, ok := kit.Tombstone[*corev1.PersistentVolume](obj)
	if !ok {
		return
	}
	c.loop.Queue.Add(volumePrefix + pv.Name)
	if ref := pv.Spec.ClaimRef; ref != nil {
		c.loop.Queue.Add(claimPrefix + ref.Namespace + "/" + ref.Name)
		return
	}
	claims, _ := c.claims.List(labels.Everything())
	for _, pvc := range claims {
		if pvc.Spec.VolumeName == "" && pvc.DeletionTimestamp == nil {
			c.loop.Queue.Add(claimPrefix + pvc.Namespace + "/" + pvc.Name)
		}
	}
}

// volumeDeleted: the claim bound to it is lost.
func (c *controller) volumeDeleted(obj any) {
	if pv, ok := kit.Tombstone[*corev1.PersistentVolume](obj); ok && pv.Spec.ClaimRef != nil {
		c.loop.Queue.Add(claimPrefix + pv.Spec.ClaimRef.Namespace + "/" + pv.Spec.ClaimRef.Name)
	}
}

// sync dispatches a queued key.
func (c *controller) sync(ctx context.Context, key string) error {
	if name, ok := strings.CutPrefix(key, volumePrefix); ok {
		return c.syncVolumeKey(ctx, name)
	}
	if k, ok := strings.CutPrefix(key, claimPrefix); ok {
		return c.syncClaimKey(ctx, k)
	}
	return nil
}
