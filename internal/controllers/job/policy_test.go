package job

import (
	"maps"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestMatchFailurePolicy(t *testing.T) {
	exited := func(codes ...int32) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
		for i, c := range codes {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: []string{"a", "b"}[i],
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: c}}})
		}
		return p
	}
	evicted := exited(137)
	evicted.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}
	policy := &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{
			{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}},
		{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
			ContainerName: ptr.To("b"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{3}}},
		{Action: batchv1.PodFailurePolicyActionCount, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
			Operator: batchv1.PodFailurePolicyOnExitCodesOpNotIn, Values: []int32{3, 4}}},
	}}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want batchv1.PodFailurePolicyAction // "" when no rule matches
		msg  string
	}{
		{"condition", evicted, batchv1.PodFailurePolicyActionIgnore, "Pod ns/p has condition DisruptionTarget matching Ignore rule at index 0"},
		{"named container", exited(0, 3), batchv1.PodFailurePolicyActionFailJob, "Container b for pod ns/p failed with exit code 3 matching FailJob rule at index 1"},
		{"other container", exited(3, 0), "", ""},
		{"not in", exited(5), batchv1.PodFailurePolicyActionCount, "Container a for pod ns/p failed with exit code 5 matching Count rule at index 2"},
		{"exit 0 never matches", exited(0), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, msg := matchFailurePolicy(policy, tc.pod)
			if (got == nil) != (tc.want == "") || got != nil && *got != tc.want || msg != tc.msg {
				t.Errorf("got %v %q, want %q %q", got, msg, tc.want, tc.msg)
			}
		})
	}
}

func TestParseIndexes(t *testing.T) {
	for _, tc := range []struct {
		in    string
		limit int
		want  []int
		bad   bool
	}{
		{"", 5, nil, false},
		{"0,2-4,7", 10, []int{0, 2, 3, 4, 7}, false},
		{"3-8", 5, []int{3, 4}, false},
		{"2,1", 5, nil, true},
		{"1-", 5, nil, true},
		{"4-2", 5, nil, true},
		{"a", 5, nil, true},
	} {
		got, err := parseIndexes(tc.in, tc.limit)
		if (err != nil) != tc.bad || !tc.bad && !slices.Equal(slices.Sorted(maps.Keys(got)), tc.want) {
			t.Errorf("parseIndexes(%q) = %v, %v", tc.in, got, err)
		}
	}
}

func TestMatchSuccessPolicy(t *testing.T) {
	job := &batchv1.Job{Spec: batchv1.JobSpec{Completions: ptr.To[int32](6), CompletionMode: ptr.To(batchv1.IndexedCompletion),
		SuccessPolicy: &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{
			{SucceededIndexes: ptr.To("0-2")},
			{SucceededIndexes: ptr.To("3-5"), SucceededCount: ptr.To[int32](2)},
			{SucceededCount: ptr.To[int32](5)},
		}}}}
	set := func(idx ...int) map[int]bool {
		m := map[int]bool{}
		for _, i := range idx {
			m[i] = true
		}
		return m
	}
	for _, tc := range []struct {
		succeeded map[int]bool
		msg       string
	}{
		{set(0, 1), ""},
		{set(0, 1, 2), "Matched rules at index 0"},
		{set(0, 3, 5), "Matched rules at index 1"},
		{set(0, 1, 3, 4), "Matched rules at index 1"},
		{set(0, 1, 2, 3, 4), "Matched rules at index 0"},
		{set(1, 2, 3), ""},
	} {
		msg, ok := matchSuccessPolicy(job, tc.succeeded)
		if msg != tc.msg || ok != (tc.msg != "") {
			t.Errorf("succeeded %v: %q %v, want %q", tc.succeeded, msg, ok, tc.msg)
		}
	}
}
