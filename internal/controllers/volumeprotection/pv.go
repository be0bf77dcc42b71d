package volumeprotection

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// PVName is kube's name for the volume protection controller.
const PVName = "pv-protection-controller"

// pvFinalizer keeps a PersistentVolume while it is Bound.
const pvFinalizer = "kubernetes.io/pv-protection"

type pvController struct {
	*worker
	client kubernetes.Interface
	pvs    corelisters.PersistentVolumeLister
}

// NewPV returns the volume protection controller of the term of kc.
func NewPV(kc *kit.Context, cfg Config) kit.Controller {
	inf := kc.Informers.PersistentVolumes()
	c := &pvController{client: kc.Client(PVName), pvs: corelisters.NewPersistentVolumeLister(inf.GetIndexer())}
	c.worker = newWorker(kc, cfg, PVName, c.sync)
	onPV := func(obj any) {
		if pv, ok := obj.(*corev1.PersistentVolume); ok && needsWork(pv) {
			c.enqueue(pv)
		}
	}
	inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onPV, UpdateFunc: func(_, obj any) { onPV(obj) }})
	return c
}

func (c *pvController) Name() string { return "pv-protection" }

func (c *pvController) Run(ctx context.Context) { c.run(ctx) }

func needsWork(pv *corev1.PersistentVolume) bool {
	deleting := pv.DeletionTimestamp != nil
	return candidate(deleting, pv.Finalizers, pvFinalizer) || lacks(deleting, pv.Finalizers, pvFinalizer)
}

// sync removes the finalizer of a volume being deleted that is not
// Bound, and adds it to a volume that lacks it.
func (c *pvController) sync(ctx context.Context, name string) error {
	pv, err := c.pvs.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	deleting := pv.DeletionTimestamp != nil
	out := pv.DeepCopy()
	switch {
	case candidate(deleting, pv.Finalizers, pvFinalizer) && pv.Status.Phase != corev1.VolumeBound:
		out.Finalizers = without(pv.Finalizers, pvFinalizer)
	case lacks(deleting, pv.Finalizers, pvFinalizer):
		out.Finalizers = append(out.Finalizers, pvFinalizer)
	default:
		return nil
	}
	_, err = c.client.CoreV1().PersistentVolumes().Update(ctx, out, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
