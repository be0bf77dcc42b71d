package workloadtest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Outcome is what the kubelet makes of a pod: Running and Ready, or
// finished (Succeeded, Failed).
type Outcome func(pod *corev1.Pod) corev1.PodPhase

// Run keeps every pod running and ready.
func Run(*corev1.Pod) corev1.PodPhase { return corev1.PodRunning }

// Kubelet runs the pods of one namespace through cs: a new pod gets
// status.phase (Running: with the Ready condition True, a podIP and a
// startTime; Succeeded or Failed: its containers terminated with exit
// code 0 or 1); a pod being deleted gracefully is deleted for good, as a
// kubelet confirms a deletion.
type Kubelet struct {
	cs      kubernetes.Interface
	outcome Outcome
	q       workqueue.TypedRateLimitingInterface[string]
	lister  cache.Indexer
	ip      atomic.Uint32
	paused  atomic.Bool
}

// StartKubelet starts a kubelet for namespace ns; it stops on t.Cleanup.
func StartKubelet(t *testing.T, cs kubernetes.Interface, ns string, outcome Outcome) *Kubelet {
	t.Helper()
	k := &Kubelet{cs: cs, outcome: outcome,
		q: workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](10*time.Millisecond, time.Second))}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := f.Core().V1().Pods().Informer()
	k.lister = inf.GetIndexer()
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			k.q.Add(key)
		}
	}
	inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }})
	ctx, cancel := context.WithCancel(context.Background())
	f.Start(ctx.Done())
	var wg sync.WaitGroup
	wg.Go(func() { kit.RunWorkers(ctx, k.q, 4, k.process) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		f.Shutdown()
	})
	if !cache.WaitForCacheSync(t.Context().Done(), inf.HasSynced) {
		t.Fatal("kubelet: pod informer did not sync")
	}
	return k
}

// Pause stops (true) or resumes (false) starting pods; paused, new pods
// stay Pending.
func (k *Kubelet) Pause(p bool) {
	k.paused.Store(p)
	if !p {
		for _, key := range k.lister.ListKeys() {
			k.q.Add(key)
		}
	}
}

func (k *Kubelet) process(ctx context.Context, key string) {
	if err := k.sync(ctx, key); err != nil && ctx.Err() == nil {
		k.q.AddRateLimited(key)
		return
	}
	k.q.Forget(key)
}

func (k *Kubelet) sync(ctx context.Context, key string) error {
	obj, ok, err := k.lister.GetByKey(key)
	if err != nil || !ok {
		return err
	}
	pod := obj.(*corev1.Pod)
	if pod.DeletionTimestamp != nil {
		zero := int64(0)
		err := k.cs.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero,
			Preconditions: metav1.NewUIDPreconditions(string(pod.UID))})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	}
	phase := k.outcome(pod)
	if k.paused.Load() || pod.Status.Phase == phase || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return nil
	}
	cp := pod.DeepCopy()
	now := metav1.Now()
	cp.Status.Phase = phase
	cp.Status.StartTime = &now
	ready := corev1.ConditionFalse
	if phase == corev1.PodRunning {
		ready = corev1.ConditionTrue
		n := k.ip.Add(1)
		cp.Status.PodIP = fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255)
	}
	cp.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready, LastTransitionTime: now}}
	if phase == corev1.PodSucceeded || phase == corev1.PodFailed { // containers exit 0, or 1
		code := int32(0)
		if phase == corev1.PodFailed {
			code = 1
		}
		cp.Status.ContainerStatuses = nil
		for _, c := range pod.Spec.Containers {
			cp.Status.ContainerStatuses = append(cp.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, FinishedAt: now}}})
		}
	}
	_, err = k.cs.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or changed: the informer brings the change
	}
	return err
}
