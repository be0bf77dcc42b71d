package job_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/controllers/workload/workloadtest"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// outcome finishes job pods: Failed when their template says
// outcome=fail (or outcome=odd and their index is odd), Succeeded
// otherwise.
func outcome(p *corev1.Pod) corev1.PodPhase {
	i, _ := strconv.Atoi(p.Annotations[batchv1.JobCompletionIndexAnnotation])
	if p.Labels["outcome"] == "fail" || p.Labels["outcome"] == "odd" && i%2 == 1 {
		return corev1.PodFailed
	}
	return corev1.PodSucceeded
}

// The Job controller in a cluster of 3, driven through a follower; the
// test is the kubelet, whose pods run to completion at once.
func TestJob(t *testing.T) {
	c := membertest.StartCluster(t, 3)
	cs := c.Clientset(c.Follower())
	ns := "jobs"
	workloadtest.Namespace(t, cs, ns)
	rec := workloadtest.Record(t, func(o metav1.ListOptions) (watch.Interface, error) { return cs.CoreV1().Pods(ns).Watch(t.Context(), o) })
	workloadtest.StartKubelet(t, cs, ns, outcome)
	t.Run("parallel", func(t *testing.T) { testParallel(t, cs, ns, rec) })
	t.Run("indexed", func(t *testing.T) { testIndexed(t, cs, ns) })
	t.Run("backoff limit", func(t *testing.T) { testBackoffLimit(t, cs, ns) })
	t.Run("ttl after finished", func(t *testing.T) { testTTL(t, cs, ns) })
	t.Run("success policy", func(t *testing.T) { testSuccessPolicy(t, cs, ns) })
	t.Run("backoff limit per index", func(t *testing.T) { testPerIndex(t, cs, ns) })
	t.Run("pod failure policy", func(t *testing.T) { testPodFailurePolicy(t, cs, ns) })
	t.Run("managed by", func(t *testing.T) { testManagedBy(t, cs, ns) })
}

func newJob(name string, completions, parallelism int32) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: batchv1.JobSpec{
		Completions: &completions, Parallelism: &parallelism,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
}

// waitFinished waits for the condition typ (Complete, Failed) of job.
func waitFinished(t *testing.T, cs kubernetes.Interface, ns, name string, typ batchv1.JobConditionType) *batchv1.Job {
	t.Helper()
	var job *batchv1.Job
	membertest.Eventually(t, 30*time.Second, func() (err error) {
		if job, err = cs.BatchV1().Jobs(ns).Get(t.Context(), name, metav1.GetOptions{}); err != nil {
			return err
		}
		for _, c := range job.Status.Conditions {
			if c.Type == typ && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("job %s: status %+v", name, job.Status)
	})
	return job
}

func conditionTypes(job *batchv1.Job) []batchv1.JobConditionType {
	var out []batchv1.JobConditionType
	for _, c := range job.Status.Conditions {
		out = append(out, c.Type)
	}
	return out
}

// testParallel: five completions, two pods at a time.
func testParallel(t *testing.T, cs kubernetes.Interface, ns string, rec *workloadtest.Recorder) {
	if _, err := cs.BatchV1().Jobs(ns).Create(t.Context(), newJob("pi", 5, 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	job := waitFinished(t, cs, ns, "pi", batchv1.JobComplete)
	st := job.Status
	if st.Succeeded != 5 || st.Failed != 0 || st.Active != 0 || st.StartTime == nil || st.CompletionTime == nil ||
		!slices.Equal(conditionTypes(job), []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet, batchv1.JobComplete}) {
		t.Errorf("status %+v", st)
	}
	running, most, created := map[string]bool{}, 0, 0
	for _, ev := range rec.Events() {
		p := ev.Object.(*corev1.Pod)
		if p.Labels[batchv1.JobNameLabel] != "pi" {
			continue
		}
		if ev.Type == watch.Added {
			created++
			if ref := metav1.GetControllerOf(p); ref == nil || ref.UID != job.UID || p.Labels[batchv1.ControllerUidLabel] != string(job.UID) {
				t.Errorf("pod %s: owners %v, labels %v", p.Name, p.OwnerReferences, p.Labels)
			}
		}
		if ev.Type == watch.Deleted || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			delete(running, p.Name)
		} else {
			running[p.Name] = true
		}
		most = max(most, len(running))
	}
	if most > 2 || created != 5 {
		t.Errorf("%d pods created, at most %d at once; want 5, at most 2", created, most)
	}
}

// testIndexed: one pod per index, reported in completedIndexes.
func testIndexed(t *testing.T, cs kubernetes.Interface, ns string) {
	job := newJob("idx", 3, 3)
	mode := batchv1.IndexedCompletion
	job.Spec.CompletionMode = &mode
	if _, err := cs.BatchV1().Jobs(ns).Create(t.Context(), job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	job = waitFinished(t, cs, ns, "idx", batchv1.JobComplete)
	if job.Status.CompletedIndexes != "0-2" || job.Status.Succeeded != 3 {
		t.Errorf("status %+v", job.Status)
	}
	pods, err := cs.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=idx"})
	if err != nil {
		t.Fatal(err)
	}
	var idx []string
	for _, p := range pods.Items {
		idx = append(idx, p.Annotations[batchv1.JobCompletionIndexAnnotation])
	}
	slices.Sort(idx)
	if !slices.Equal(idx, []string{"0", "1", "2"}) {
		t.Errorf("pod indexes %v", idx)
	}
}

// testBackoffLimit: pods that fail more than backoffLimit times fail the
// Job.
func testBackoffLimit(t *testing.T, cs kubernetes.Interface, ns string) {
	job := newJob("flaky", 1, 1)
	limit := int32(1)
	job.Spec.BackoffLimit = &limit
	job.Spec.Template.Labels = map[string]string{"outcome": "fail"}
	if _, err := cs.BatchV1().Jobs(ns).Create(t.Context(), job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	job = waitFinished(t, cs, ns, "flaky", batchv1.JobFailed)
	last := job.Status.Conditions[len(job.Status.Conditions)-1]
	if job.Status.Failed != 2 || last.Reason != batchv1.JobReasonBackoffLimitExceeded || job.Status.Succeeded != 0 {
		t.Errorf("status %+v", job.Status)
	}
}

// testTTL: a finished Job with ttlSecondsAfterFinished 0 is deleted.
func testTTL(t *testing.T, cs kubernetes.Interface, ns string) {
	job := newJob("once", 1, 1)
	zero := int32(0)
	job.Spec.TTLSecondsAfterFinished = &zero
	if _, err := cs.BatchV1().Jobs(ns).Create(t.Context(), job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	membertest.Eventually(t, 30*time.Second, func() error {
		_, err := cs.BatchV1().Jobs(ns).Get(t.Context(), "once", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("job once still there (%v)", err)
	})
}
