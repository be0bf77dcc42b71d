package clients

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// jobController stands in for kube-controller-manager's job controller:
// litek8s runs no pods, so it marks every Job of a namespace as succeeded
// through the jobs/status subresource, the way the job controller reports
// a Job whose one pod succeeded. Helm waits for exactly this on a hook Job.
type jobController struct {
	cs kubernetes.Interface
	mu sync.Mutex // protects completed and errs
	// completed lists each Job completed as name/revision-label.
	completed []string
	errs      []string
}

func startJobController(t *testing.T, cs kubernetes.Interface, ns string) *jobController {
	t.Helper()
	jc := &jobController{cs: cs}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	ctx, cancel := context.WithCancel(context.Background())
	complete := func(obj any) {
		if job, ok := obj.(*batchv1.Job); ok && !finished(job) {
			jc.complete(ctx, job)
		}
	}
	reg, err := f.Batch().V1().Jobs().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    complete,
		UpdateFunc: func(_, obj any) { complete(obj) },
	})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	t.Cleanup(func() {
		cancel()
		f.Shutdown()
	})
	wctx, wcancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer wcancel()
	if !cache.WaitForCacheSync(wctx.Done(), reg.HasSynced) {
		t.Fatal("job informer did not sync")
	}
	return jc
}

func finished(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func (jc *jobController) complete(ctx context.Context, job *batchv1.Job) {
	now := metav1.Now()
	j := job.DeepCopy()
	j.Status = batchv1.JobStatus{
		StartTime: &now, CompletionTime: &now, Succeeded: 1, Active: 0,
		Ready: ptr.To[int32](0), Terminating: ptr.To[int32](0),
		UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{},
		Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonCompletionsReached,
				Message: "Reached expected number of succeeded pods", LastProbeTime: now, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonCompletionsReached,
				Message: "Reached expected number of succeeded pods", LastProbeTime: now, LastTransitionTime: now},
		},
	}
	_, err := jc.cs.BatchV1().Jobs(j.Namespace).UpdateStatus(ctx, j, metav1.UpdateOptions{})
	jc.mu.Lock()
	defer jc.mu.Unlock()
	if apierrors.IsConflict(err) {
		return // acting on a stale copy: the newer one comes as an update
	}
	if err != nil {
		jc.errs = append(jc.errs, fmt.Sprintf("PUT jobs/%s/status: %v", j.Name, err))
		return
	}
	jc.completed = append(jc.completed, j.Name+"/"+j.Labels["demo.litek8s.io/revision"])
}

func (jc *jobController) state() (completed, errs []string) {
	jc.mu.Lock()
	defer jc.mu.Unlock()
	return append([]string(nil), jc.completed...), append([]string(nil), jc.errs...)
}
