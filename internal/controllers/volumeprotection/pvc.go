package volumeprotection

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// PVCName is kube's name for the claim protection controller.
const PVCName = "pvc-protection-controller"

// pvcFinalizer keeps a PersistentVolumeClaim while a pod uses it.
const pvcFinalizer = "kubernetes.io/pvc-protection"

type pvcController struct {
	*worker
	client kubernetes.Interface
	pvcs   corelisters.PersistentVolumeClaimLister
	pods   corelisters.PodLister
}

// New returns the claim protection controller of the term of kc.
func New(kc *kit.Context, cfg Config) kit.Controller {
	pvcInf, podInf := kc.Informers.PersistentVolumeClaims(), kc.Informers.Pods()
	c := &pvcController{client: kc.Client(PVCName),
		pvcs: corelisters.NewPersistentVolumeClaimLister(pvcInf.GetIndexer()),
		pods: corelisters.NewPodLister(podInf.GetIndexer())}
	c.worker = newWorker(kc, cfg, PVCName, c.sync)
	onPVC := func(obj any) {
		if pvc, ok := obj.(*corev1.PersistentVolumeClaim); ok {
			deleting := pvc.DeletionTimestamp != nil
			if candidate(deleting, pvc.Finalizers, pvcFinalizer) || lacks(deleting, pvc.Finalizers, pvcFinalizer) {
				c.enqueue(pvc)
			}
		}
	}
	pvcInf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onPVC, UpdateFunc: func(_, obj any) { onPVC(obj) }})
	podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { c.enqueueClaims(asPod(obj), false) },
		UpdateFunc: func(old, cur any) {
			o, p := asPod(old), asPod(cur)
			c.enqueueClaims(p, false)
			if o != nil && p != nil && o.UID != p.UID { // a pod replaced by another of the same name
				c.enqueueClaims(o, true)
			}
		},
		DeleteFunc: func(obj any) { c.enqueueClaims(asPod(obj), true) },
	})
	return c
}

func (c *pvcController) Name() string { return "pvc-protection" }

func (c *pvcController) Run(ctx context.Context) { c.run(ctx) }

// enqueueClaims queues the claims pod names, when the pod's change can
// free them (it went, finished, or is not bound to a node).
func (c *pvcController) enqueueClaims(pod *corev1.Pod, deleted bool) {
	if pod == nil || !deleted && pod.Spec.NodeName != "" && !terminated(pod) && !shutDown(pod) {
		return
	}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		switch {
		case v.PersistentVolumeClaim != nil:
			c.queue.Add(pod.Namespace + "/" + v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			c.queue.Add(pod.Namespace + "/" + ephemeralClaim(pod, v))
		}
	}
}

// sync removes the finalizer of a claim being deleted that no pod uses,
// and adds it to a claim that lacks it.
func (c *pvcController) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	pvc, err := c.pvcs.PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	deleting := pvc.DeletionTimestamp != nil
	out := pvc.DeepCopy()
	switch {
	case candidate(deleting, pvc.Finalizers, pvcFinalizer):
		used, err := c.used(ctx, pvc)
		if err != nil || used {
			return err // a pod's change queues the claim again
		}
		out.Finalizers = without(pvc.Finalizers, pvcFinalizer)
	case lacks(deleting, pvc.Finalizers, pvcFinalizer):
		out.Finalizers = append(out.Finalizers, pvcFinalizer)
	default:
		return nil
	}
	_, err = c.client.CoreV1().PersistentVolumeClaims(ns).Update(ctx, out, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// used reports whether a pod uses pvc: the informer's "no" is checked
// against a live list, which also holds pods created too recently for the
// cache.
func (c *pvcController) used(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (bool, error) {
	pods, err := c.pods.Pods(pvc.Namespace).List(labels.Everything())
	if err != nil {
		return false, err
	}
	for _, pod := range pods {
		if uses(pod, pvc) {
			return true, nil
		}
	}
	live, err := c.client.CoreV1().Pods(pvc.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	for i := range live.Items {
		if uses(&live.Items[i], pvc) {
			return true, nil
		}
	}
	return false, nil
}

// uses is kube's podUsesPVC for deletion: only pods bound to a node
// count (a kubelet refuses to start a pod whose claim is being deleted).
func uses(pod *corev1.Pod, pvc *corev1.PersistentVolumeClaim) bool {
	if pod.Spec.NodeName == "" {
		return false
	}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == pvc.Name {
			return true
		}
		if v.Ephemeral != nil && !shutDown(pod) && ephemeralClaim(pod, v) == pvc.Name && metav1.IsControlledBy(pvc, pod) {
			return true
		}
	}
	return false
}

// ephemeralClaim is the name of the claim of an ephemeral volume.
func ephemeralClaim(pod *corev1.Pod, v *corev1.Volume) string { return pod.Name + "-" + v.Name }

// shutDown: deleted with no grace period left (the kubelet is done with
// it, or it was forced).
func shutDown(pod *corev1.Pod) bool {
	g := pod.DeletionGracePeriodSeconds
	return pod.DeletionTimestamp != nil && g != nil && *g == 0
}

func terminated(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

func asPod(obj any) *corev1.Pod {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, _ := obj.(*corev1.Pod)
	return pod
}
