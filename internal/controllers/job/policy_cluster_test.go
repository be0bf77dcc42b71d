package job_test

import (
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// indexedJob is an Indexed job whose pods finish as outcome (see
// outcome).
func indexedJob(name, outcome string, completions, parallelism int32) *batchv1.Job {
	job := newJob(name, completions, parallelism)
	job.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	job.Spec.Template.Labels = map[string]string{"outcome": outcome}
	return job
}

func create(t *testing.T, cs kubernetes.Interface, ns string, job *batchv1.Job) {
	t.Helper()
	if _, err := cs.BatchV1().Jobs(ns).Create(t.Context(), job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// checkConditions checks that a finished job has the interim condition
// then the final one, both with reason, and no pod left.
func checkConditions(t *testing.T, job *batchv1.Job, interim, final batchv1.JobConditionType, reason string) {
	t.Helper()
	conds := job.Status.Conditions
	if !slices.Equal(conditionTypes(job), []batchv1.JobConditionType{interim, final}) ||
		conds[0].Reason != reason || conds[1].Reason != reason {
		t.Errorf("job %s: conditions %+v, want %s then %s with reason %s", job.Name, conds, interim, final, reason)
	}
	st := job.Status
	if st.Active != 0 || st.Ready == nil || *st.Ready != 0 || st.Terminating == nil || *st.Terminating != 0 {
		t.Errorf("job %s: active %d, ready %v, terminating %v; want 0, 0, 0", job.Name, st.Active, st.Ready, st.Terminating)
	}
}

// testSuccessPolicy: the job succeeds as soon as a rule matches, even
// with indexes left (conformance's job.go "with successPolicy" specs).
func testSuccessPolicy(t *testing.T, cs kubernetes.Interface, ns string) {
	for _, rule := range []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To("0")}, {SucceededCount: ptr.To[int32](1)}} {
		name := "sp-indexes"
		if rule.SucceededCount != nil {
			name = "sp-count"
		}
		job := indexedJob(name, "odd", 5, 2)
		job.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{rule}}
		job.Spec.BackoffLimit = ptr.To[int32](100)
		create(t, cs, ns, job)
		job = waitFinished(t, cs, ns, name, batchv1.JobComplete)
		checkConditions(t, job, batchv1.JobSuccessCriteriaMet, batchv1.JobComplete, batchv1.JobReasonSuccessPolicy)
		if job.Status.CompletedIndexes != "0" || job.Status.Succeeded != 1 || job.Status.CompletionTime == nil ||
			job.Status.Conditions[0].Message != "Matched rules at index 0" {
			t.Errorf("job %s: status %+v", name, job.Status)
		}
	}
	// All indexes needed: CompletionsReached would also hold, the policy
	// is reported.
	job := indexedJob("sp-all", "succeed", 2, 2)
	job.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](2)}}}
	create(t, cs, ns, job)
	job = waitFinished(t, cs, ns, "sp-all", batchv1.JobComplete)
	checkConditions(t, job, batchv1.JobSuccessCriteriaMet, batchv1.JobComplete, batchv1.JobReasonSuccessPolicy)
	if job.Status.Succeeded != 2 || job.Status.Failed != 0 {
		t.Errorf("sp-all: status %+v", job.Status)
	}
}

// testManagedBy: a Job managed by another controller gets no pods and
// no status from this one.
func testManagedBy(t *testing.T, cs kubernetes.Interface, ns string) {
	job := newJob("external", 2, 2)
	job.Spec.ManagedBy = ptr.To("example.com/custom-job-controller")
	create(t, cs, ns, job)
	// A marker job created after it is reconciled: by then the first was
	// seen too (one informer, one queue).
	create(t, cs, ns, newJob("marker", 1, 1))
	waitFinished(t, cs, ns, "marker", batchv1.JobComplete)
	got, err := cs.BatchV1().Jobs(ns).Get(t.Context(), "external", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods, err := cs.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=external"})
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(got.Status, batchv1.JobStatus{}) || len(pods.Items) != 0 {
		t.Errorf("external job: status %+v, %d pods", got.Status, len(pods.Items))
	}
}

// testPerIndex: with backoffLimitPerIndex every index runs, failing ones
// are retried that often and listed in failedIndexes; maxFailedIndexes
// ends the job early.
func testPerIndex(t *testing.T, cs kubernetes.Interface, ns string) {
	job := indexedJob("per-index", "odd", 4, 2)
	job.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
	create(t, cs, ns, job)
	job = waitFinished(t, cs, ns, "per-index", batchv1.JobFailed)
	checkConditions(t, job, batchv1.JobFailureTarget, batchv1.JobFailed, batchv1.JobReasonFailedIndexes)
	st := job.Status
	if st.FailedIndexes == nil || *st.FailedIndexes != "1,3" || st.CompletedIndexes != "0,2" || st.Failed != 4 || st.Succeeded != 2 {
		t.Errorf("per-index: status %+v", st)
	}
	pods, err := cs.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=per-index"})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string][]string{}
	for _, p := range pods.Items {
		i := p.Annotations[batchv1.JobCompletionIndexAnnotation]
		counts[i] = append(counts[i], p.Annotations[batchv1.JobIndexFailureCountAnnotation])
	}
	for _, i := range []string{"1", "3"} {
		slices.Sort(counts[i])
		if !slices.Equal(counts[i], []string{"0", "1"}) {
			t.Errorf("index %s: failure counts %v, want [0 1]", i, counts[i])
		}
	}

	job = indexedJob("max-failed", "fail", 4, 1)
	job.Spec.BackoffLimitPerIndex, job.Spec.MaxFailedIndexes = ptr.To[int32](0), ptr.To[int32](0)
	create(t, cs, ns, job)
	job = waitFinished(t, cs, ns, "max-failed", batchv1.JobFailed)
	checkConditions(t, job, batchv1.JobFailureTarget, batchv1.JobFailed, batchv1.JobReasonMaxFailedIndexesExceeded)
	if st := job.Status; st.FailedIndexes == nil || *st.FailedIndexes != "0" || st.Failed != 1 {
		t.Errorf("max-failed: status %+v", st)
	}
}

// testPodFailurePolicy: FailIndex fails an index without retries, FailJob
// the whole job at the first matching failure (Ignore: see
// TestMatchFailurePolicy).
func testPodFailurePolicy(t *testing.T, cs kubernetes.Interface, ns string) {
	onExit1 := func(a batchv1.PodFailurePolicyAction) *batchv1.PodFailurePolicy {
		return &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: a,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{1}}}}}
	}
	job := indexedJob("fail-index", "odd", 2, 2)
	job.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
	job.Spec.PodFailurePolicy = onExit1(batchv1.PodFailurePolicyActionFailIndex)
	create(t, cs, ns, job)
	job = waitFinished(t, cs, ns, "fail-index", batchv1.JobFailed)
	if st := job.Status; st.FailedIndexes == nil || *st.FailedIndexes != "1" || st.CompletedIndexes != "0" || st.Failed != 1 || st.Succeeded != 1 {
		t.Errorf("fail-index: status %+v", st)
	}

	job = newJob("fail-job", 4, 2)
	job.Spec.Template.Labels = map[string]string{"outcome": "fail"}
	job.Spec.PodFailurePolicy = onExit1(batchv1.PodFailurePolicyActionFailJob)
	create(t, cs, ns, job)
	job = waitFinished(t, cs, ns, "fail-job", batchv1.JobFailed)
	checkConditions(t, job, batchv1.JobFailureTarget, batchv1.JobFailed, batchv1.JobReasonPodFailurePolicy)
	if msg := job.Status.Conditions[1].Message; !strings.HasPrefix(msg, "Container c for pod "+ns+"/fail-job-") ||
		!strings.HasSuffix(msg, " failed with exit code 1 matching FailJob rule at index 0") {
		t.Errorf("fail-job: message %q", msg)
	}
}
