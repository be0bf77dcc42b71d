package job

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/litek8s/litek8s/internal/controllers/kit"
	"github.com/litek8s/litek8s/internal/controllers/workload"
)

// view is what a sync sees of a Job's pods.
type view struct {
	active                  []*corev1.Pod
	ready, terminating      int32
	succeeded, failed       int32        // failed: those the pod failure policy counts
	succeededIdx, activeIdx map[int]bool // Indexed Jobs only
	// failedIdx are the indexes out of retries and idxFailures the
	// failures of each index (backoffLimitPerIndex only).
	failedIdx   map[int]bool
	idxFailures map[int]int32
	// failJob is why the pod failure policy fails the Job ("" if not).
	failJob string
}

func (c *controller) sync(ctx context.Context, key string) error {
	cached, ok, err := kit.Cached(key, func(ns, name string) (*batchv1.Job, error) {
		return c.jobs.Jobs(ns).Get(name)
	}, func() { c.exp.Forget(key) })
	if !ok {
		return err
	}
	ns, name := cached.Namespace, cached.Name
	if m := cached.Spec.ManagedBy; m != nil && *m != batchv1.JobControllerName {
		return nil // another controller reconciles it (spec.managedBy)
	}
	job := cached.DeepCopy()
	if finished(job) {
		return c.expire(ctx, job)
	}
	sel, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
	if err != nil || sel.Empty() {
		return nil
	}
	satisfied := c.exp.Satisfied(key)
	all, err := c.pods.Pods(ns).List(labels.Everything())
	if err != nil {
		return err
	}
	claimer := &workload.Claimer{Owner: job, Kind: kind, Selector: sel,
		Recheck: func(ctx context.Context) (metav1.Object, error) {
			return c.client.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		},
		Patch: func(ctx context.Context, ns, name string, p []byte) error {
			_, err := c.client.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, p, metav1.PatchOptions{})
			return err
		}}
	pods, err := workload.Claim(ctx, claimer, all)
	if err != nil {
		return err
	}
	st := job.Status.DeepCopy()
	v := observe(job, st, pods)
	now := time.Now()
	var manageErr error
	if decided(st) == nil {
		c.decide(job, st, v, now)
	}
	if interim := decided(st); interim != nil {
		// Decided: no pod runs any more; the final condition waits
		// until none is left terminating (kube 1.37).
		manageErr = c.deletePods(ctx, key, job, v.active)
		if manageErr == nil && len(v.active) == 0 && v.terminating == 0 {
			c.conclude(job, st, interim, now)
		}
	} else if satisfied {
		manageErr = c.manage(ctx, key, job, st, v, now)
	}
	st.Active, st.Ready, st.Terminating = int32(len(v.active)), &v.ready, &v.terminating
	if err := c.updateStatus(ctx, job, st); err != nil {
		return errors.Join(manageErr, err)
	}
	if manageErr == nil && job.Spec.ActiveDeadlineSeconds != nil && st.StartTime != nil && !finished(&batchv1.Job{Status: *st}) {
		left := time.Until(st.StartTime.Add(time.Duration(*job.Spec.ActiveDeadlineSeconds) * time.Second))
		c.loop.Queue.AddAfter(key, max(left, 0))
	}
	return manageErr
}

// observe counts job's pods and folds them into st's counts: succeeded
// and failed never go down, completed and failed indexes are kept.
func observe(job *batchv1.Job, st *batchv1.JobStatus, pods []*corev1.Pod) view {
	v := view{succeededIdx: map[int]bool{}, activeIdx: map[int]bool{}, failedIdx: map[int]bool{}, idxFailures: map[int]int32{}}
	for _, p := range pods {
		i, hasIdx := indexOf(p, job)
		if hasIdx && perIndex(job) {
			v.idxFailures[i] = max(v.idxFailures[i], failureCount(p))
		}
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			v.succeeded++
			if hasIdx {
				v.succeededIdx[i] = true
			}
		case p.Status.Phase == corev1.PodFailed:
			v.countFailure(job, p, i, hasIdx)
		case p.DeletionTimestamp != nil:
			v.terminating++
		case workload.IsActive(p):
			v.active = append(v.active, p)
			if workload.IsReady(p) {
				v.ready++
			}
			if hasIdx {
				v.activeIdx[i] = true
			}
		}
	}
	st.Succeeded, st.Failed = max(st.Succeeded, v.succeeded), max(st.Failed, v.failed)
	if indexed(job) {
		done, _ := parseIndexes(st.CompletedIndexes, completions(job))
		for i := range done {
			v.succeededIdx[i] = true
		}
		st.CompletedIndexes = formatIndexes(v.succeededIdx)
		st.Succeeded = int32(len(v.succeededIdx))
	}
	if perIndex(job) {
		if st.FailedIndexes != nil {
			failed, _ := parseIndexes(*st.FailedIndexes, completions(job))
			for i := range failed {
				v.failedIdx[i] = true
			}
		}
		for i, n := range v.idxFailures {
			if n > *job.Spec.BackoffLimitPerIndex {
				v.failedIdx[i] = true
			}
		}
		for i := range v.succeededIdx {
			delete(v.failedIdx, i)
		}
		fi := formatIndexes(v.failedIdx)
		st.FailedIndexes = &fi
	}
	return v
}

// countFailure applies the pod failure policy to a failed pod: Ignore
// does not count it, FailJob fails the Job, FailIndex fails its index.
func (v *view) countFailure(job *batchv1.Job, p *corev1.Pod, i int, hasIdx bool) {
	action, msg := matchFailurePolicy(job.Spec.PodFailurePolicy, p)
	if action != nil && *action == batchv1.PodFailurePolicyActionIgnore {
		return
	}
	v.failed++
	switch {
	case action != nil && *action == batchv1.PodFailurePolicyActionFailJob:
		if v.failJob == "" {
			v.failJob = msg
		}
	case !hasIdx || !perIndex(job):
	case action != nil && *action == batchv1.PodFailurePolicyActionFailIndex:
		v.failedIdx[i] = true
		v.idxFailures[i] = max(v.idxFailures[i], failureCount(p)+1)
	default:
		v.idxFailures[i] = max(v.idxFailures[i], failureCount(p)+1)
	}
}

// decide sets the interim condition when the Job fails (FailureTarget)
// or succeeds (SuccessCriteriaMet) now.
func (c *controller) decide(job *batchv1.Job, st *batchv1.JobStatus, v view, now time.Time) {
	reason, msg := failure(job, st, now)
	if v.failJob != "" {
		reason, msg = batchv1.JobReasonPodFailurePolicy, v.failJob
	}
	if reason == "" {
		reason, msg = indexFailure(job, v.succeededIdx, v.failedIdx)
	}
	if reason != "" {
		setCondition(st, batchv1.JobFailureTarget, reason, msg, now)
		return
	}
	if msg, ok := matchSuccessPolicy(job, v.succeededIdx); ok {
		setCondition(st, batchv1.JobSuccessCriteriaMet, batchv1.JobReasonSuccessPolicy, msg, now)
	} else if succeeded(job, st, len(v.active)) {
		setCondition(st, batchv1.JobSuccessCriteriaMet, batchv1.JobReasonCompletionsReached, "Reached expected number of succeeded pods", now)
	}
}

// conclude adds the final condition after the interim one: Complete
// (with completionTime) or Failed, with the interim's reason.
func (c *controller) conclude(job *batchv1.Job, st *batchv1.JobStatus, interim *batchv1.JobCondition, now time.Time) {
	reason, msg := interim.Reason, interim.Message
	if interim.Type == batchv1.JobSuccessCriteriaMet {
		setCondition(st, batchv1.JobComplete, reason, msg, now)
		st.CompletionTime = &metav1.Time{Time: now}
		c.events.Event(job, corev1.EventTypeNormal, "Completed", "Job completed")
		return
	}
	setCondition(st, batchv1.JobFailed, reason, msg, now)
	c.events.Event(job, corev1.EventTypeWarning, reason, msg)
}

// manage starts or stops pods to run what is left, at most parallelism
// at a time (none while suspended).
func (c *controller) manage(ctx context.Context, key string, job *batchv1.Job, st *batchv1.JobStatus, v view, now time.Time) error {
	suspended := job.Spec.Suspend != nil && *job.Spec.Suspend
	setSuspended(st, suspended, now)
	if suspended {
		return c.deletePods(ctx, key, job, v.active)
	}
	if st.StartTime == nil {
		st.StartTime = &metav1.Time{Time: now}
	}
	want := wantActive(job, st.Succeeded, int32(len(v.active)))
	running := len(v.active)
	if p := job.Spec.PodReplacementPolicy; p != nil && *p == batchv1.Failed {
		running += int(v.terminating) // replaced only once they have failed
	}
	if indexed(job) {
		want = min(want, int32(completions(job)-len(v.succeededIdx)-len(v.failedIdx)))
	}
	switch diff := int(want) - running; {
	case diff > 0:
		idx := nextIndexes(job, v, diff)
		if indexed(job) {
			diff = len(idx)
		}
		if diff == 0 {
			return nil
		}
		return c.createPods(ctx, key, job, idx, v.idxFailures, diff)
	case diff < 0 && len(v.active) > 0:
		victims := slices.Clone(v.active)
		slices.SortFunc(victims, func(a, b *corev1.Pod) int { // newest first
			return b.CreationTimestamp.Time.Compare(a.CreationTimestamp.Time)
		})
		return c.deletePods(ctx, key, job, victims[:min(-diff, len(victims))])
	}
	return nil
}

// wantActive is how many pods job should run now.
func wantActive(job *batchv1.Job, succeeded, active int32) int32 {
	par := int32(1)
	if job.Spec.Parallelism != nil {
		par = *job.Spec.Parallelism
	}
	if job.Spec.Completions == nil { // a work queue: no new pods once one succeeded
		if succeeded > 0 {
			return min(active, par)
		}
		return par
	}
	return max(0, min(par, *job.Spec.Completions-succeeded))
}

func (c *controller) createPods(ctx context.Context, key string, job *batchv1.Job, idx []int, failures map[int]int32, n int) error {
	c.exp.ExpectCreations(key, n)
	var mu sync.Mutex // guards next
	next := 0
	ok, err := workload.SlowStart(n, func() error {
		prefix := job.Name + "-"
		pod := workload.PodFromTemplate(&job.Spec.Template, job, kind, prefix)
		if indexed(job) {
			mu.Lock()
			i := idx[next]
			next++
			mu.Unlock()
			setIndex(pod, job, i)
			if perIndex(job) {
				setFailureCount(pod, failures[i])
			}
		}
		created, err := c.client.CoreV1().Pods(job.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			if !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
				c.events.Eventf(job, corev1.EventTypeWarning, "FailedCreate", "Error creating: %v", err)
			}
			return err
		}
		c.events.Eventf(job, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: %s", created.Name)
		return nil
	})
	for range n - ok {
		c.exp.CreationObserved(key)
	}
	return err
}

func (c *controller) deletePods(ctx context.Context, key string, job *batchv1.Job, pods []*corev1.Pod) error {
	d := workload.Deleter{Client: c.client, Exp: c.exp, Events: c.events, Controller: "job"}
	return d.Delete(ctx, key, job, pods)
}

func (c *controller) updateStatus(ctx context.Context, job *batchv1.Job, st *batchv1.JobStatus) error {
	if apiequality.Semantic.DeepEqual(job.Status, *st) {
		return nil
	}
	cp := job.DeepCopy()
	cp.Status = *st
	_, err := c.client.BatchV1().Jobs(job.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{})
	return err
}

// expire deletes a finished Job whose ttlSecondsAfterFinished is up, or
// looks again when it will be.
func (c *controller) expire(ctx context.Context, job *batchv1.Job) error {
	if job.Spec.TTLSecondsAfterFinished == nil || job.DeletionTimestamp != nil {
		return nil
	}
	at := finishTime(job).Add(time.Duration(*job.Spec.TTLSecondsAfterFinished) * time.Second)
	if left := time.Until(at); left > 0 {
		c.loop.Queue.AddAfter(job.Namespace+"/"+job.Name, left)
		return nil
	}
	bg := metav1.DeletePropagationBackground
	err := c.client.BatchV1().Jobs(job.Namespace).Delete(ctx, job.Name, metav1.DeleteOptions{
		PropagationPolicy: &bg, Preconditions: metav1.NewUIDPreconditions(string(job.UID))})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// indexOf returns pod's completion index in an Indexed job.
func indexOf(p *corev1.Pod, job *batchv1.Job) (int, bool) {
	if !indexed(job) {
		return 0, false
	}
	i, err := strconv.Atoi(p.Annotations[batchv1.JobCompletionIndexAnnotation])
	if err != nil || i < 0 || job.Spec.Completions == nil || i >= int(*job.Spec.Completions) {
		return 0, false
	}
	return i, true
}
