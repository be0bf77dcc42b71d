package registry

import (
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validation of the batch/v1 kinds (see validate_core.go).

// validateJob: counts not negative, a selector that the template's labels
// match, pods that restart OnFailure or Never. Once created, the selector,
// completion mode, pod failure policy and completions (but for Indexed
// jobs scaled with their parallelism) are immutable, and so is the pod
// template, except for scheduling directives while the job is suspended
// and has not started.
func validateJob(obj, old runtime.Object) field.ErrorList {
	job := obj.(*batchv1.Job)
	spec := field.NewPath("spec")
	errs := validateJobSpec(&job.Spec, spec)
	prev, ok := old.(*batchv1.Job)
	if !ok {
		return errs
	}
	sp, was := &job.Spec, &prev.Spec
	if sp.CompletionMode != nil && *sp.CompletionMode == batchv1.IndexedCompletion {
		if sp.Completions != nil && !equalPtr(sp.Completions, was.Completions) && !equalPtr(sp.Completions, sp.Parallelism) {
			errs = append(errs, field.Invalid(spec.Child("completions"), sp.Completions,
				"can only be modified in tandem with spec.parallelism"))
		}
	} else {
		errs = append(errs, validation.ValidateImmutableField(sp.Completions, was.Completions, spec.Child("completions"))...)
	}
	errs = append(errs, validation.ValidateImmutableField(sp.Selector, was.Selector, spec.Child("selector"))...)
	oldTemplate := &was.Template
	if isTrue(was.Suspend) && prev.Status.StartTime == nil {
		oldTemplate = oldTemplate.DeepCopy()
		oldTemplate.Labels, oldTemplate.Annotations = sp.Template.Labels, sp.Template.Annotations
		oldTemplate.Spec.NodeSelector, oldTemplate.Spec.Tolerations = sp.Template.Spec.NodeSelector, sp.Template.Spec.Tolerations
		oldTemplate.Spec.SchedulingGates = sp.Template.Spec.SchedulingGates
		if a := sp.Template.Spec.Affinity; a != nil {
			if oldTemplate.Spec.Affinity == nil {
				oldTemplate.Spec.Affinity = &corev1.Affinity{}
			}
			oldTemplate.Spec.Affinity.NodeAffinity = a.NodeAffinity
		}
	}
	errs = append(errs, validation.ValidateImmutableField(&sp.Template, oldTemplate, spec.Child("template"))...)
	errs = append(errs, validation.ValidateImmutableField(sp.CompletionMode, was.CompletionMode, spec.Child("completionMode"))...)
	errs = append(errs, validation.ValidateImmutableField(sp.PodFailurePolicy, was.PodFailurePolicy, spec.Child("podFailurePolicy"))...)
	errs = append(errs, validation.ValidateImmutableField(sp.BackoffLimitPerIndex, was.BackoffLimitPerIndex,
		spec.Child("backoffLimitPerIndex"))...)
	errs = append(errs, validation.ValidateImmutableField(sp.SuccessPolicy, was.SuccessPolicy, spec.Child("successPolicy"))...)
	return errs
}

// validateJobSpec checks a job spec (also a CronJob's job template),
// following kube's validateJobSpec and ValidateJobSpec.
func validateJobSpec(sp *batchv1.JobSpec, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, c := range []struct {
		v    *int32
		name string
	}{{sp.Parallelism, "parallelism"}, {sp.Completions, "completions"}, {sp.BackoffLimit, "backoffLimit"},
		{sp.TTLSecondsAfterFinished, "ttlSecondsAfterFinished"}} {
		if c.v != nil {
			errs = append(errs, validateNonnegative(int64(*c.v), spec.Child(c.name))...)
		}
	}
	if d := sp.ActiveDeadlineSeconds; d != nil {
		errs = append(errs, validateNonnegative(*d, spec.Child("activeDeadlineSeconds"))...)
	}
	if m := sp.CompletionMode; m != nil {
		switch *m {
		case batchv1.NonIndexedCompletion:
		case batchv1.IndexedCompletion:
			if sp.Completions == nil {
				errs = append(errs, field.Required(spec.Child("completions"), "when completion mode is Indexed"))
			}
		default:
			errs = append(errs, field.NotSupported(spec.Child("completionMode"), m,
				[]batchv1.CompletionMode{batchv1.NonIndexedCompletion, batchv1.IndexedCompletion}))
		}
	}
	errs = append(errs, validateJobPolicies(sp, spec)...)
	template := spec.Child("template")
	errs = append(errs, validatePodTemplateSpec(&sp.Template, template)...)
	restart := template.Child("spec", "restartPolicy")
	switch p := sp.Template.Spec.RestartPolicy; {
	case p == corev1.RestartPolicyAlways || p == "":
		errs = append(errs, field.Required(restart, `valid values: "OnFailure", "Never"`))
	case p != corev1.RestartPolicyOnFailure && p != corev1.RestartPolicyNever:
		errs = append(errs, field.NotSupported(restart, p, []corev1.RestartPolicy{corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}))
	case sp.PodFailurePolicy != nil && p != corev1.RestartPolicyNever:
		errs = append(errs, field.Invalid(restart, p, `only "Never" is supported when podFailurePolicy is specified`))
	}
	if sp.Selector == nil {
		errs = append(errs, field.Required(spec.Child("selector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(sp.Selector, metav1validation.LabelSelectorValidationOptions{},
			spec.Child("selector"))...)
	}
	if s, err := metav1.LabelSelectorAsSelector(sp.Selector); err == nil && !s.Matches(labels.Set(sp.Template.Labels)) {
		errs = append(errs, field.Invalid(template.Child("metadata", "labels"), sp.Template.Labels,
			"`selector` does not match template `labels`"))
	}
	return errs
}

// validateCronJob: a valid schedule (without TZ, which the timeZone field
// replaces) and time zone, a known concurrency policy, a valid job
// template (whose selector is optional), non-negative limits, and a name
// short enough for the jobs named after it.
func validateCronJob(obj, old runtime.Object) field.ErrorList {
	cj := obj.(*batchv1.CronJob)
	spec := field.NewPath("spec")
	sp := &cj.Spec
	var errs field.ErrorList
	prev, _ := old.(*batchv1.CronJob)
	if sp.Schedule == "" {
		errs = append(errs, field.Required(spec.Child("schedule"), ""))
	} else {
		if err := parseCronSchedule(sp.Schedule); err != nil {
			errs = append(errs, field.Invalid(spec.Child("schedule"), sp.Schedule, err.Error()))
		}
		allowTZ := prev != nil && strings.Contains(prev.Spec.Schedule, "TZ")
		switch {
		case strings.Contains(sp.Schedule, "TZ") && !allowTZ:
			errs = append(errs, field.Invalid(spec.Child("schedule"), sp.Schedule,
				"cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
		case strings.Contains(sp.Schedule, "TZ") && sp.TimeZone != nil:
			errs = append(errs, field.Invalid(spec.Child("schedule"), sp.Schedule,
				"cannot use both timeZone field and TZ or CRON_TZ in schedule"))
		}
	}
	if d := sp.StartingDeadlineSeconds; d != nil {
		errs = append(errs, validateNonnegative(*d, spec.Child("startingDeadlineSeconds"))...)
	}
	if tz := sp.TimeZone; tz != nil && (prev == nil || !equalPtr(tz, prev.Spec.TimeZone)) {
		errs = append(errs, validateTimeZone(tz, spec.Child("timeZone"))...)
	}
	switch p := sp.ConcurrencyPolicy; p {
	case batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent:
	case "":
		errs = append(errs, field.Required(spec.Child("concurrencyPolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(spec.Child("concurrencyPolicy"), p,
			[]batchv1.ConcurrencyPolicy{batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent}))
	}
	jobSpec := sp.JobTemplate.Spec
	if jobSpec.Selector == nil { // the job's own selector is generated when it is created
		jobSpec.Selector = &metav1.LabelSelector{}
	}
	errs = append(errs, validateJobSpec(&jobSpec, spec.Child("jobTemplate", "spec"))...)
	for _, c := range []struct {
		v    *int32
		name string
	}{{sp.SuccessfulJobsHistoryLimit, "successfulJobsHistoryLimit"}, {sp.FailedJobsHistoryLimit, "failedJobsHistoryLimit"}} {
		if c.v != nil {
			errs = append(errs, validateNonnegative(int64(*c.v), spec.Child(c.name))...)
		}
	}
	if prev == nil && len(cj.Name) > 52 { // the controller appends "-<timestamp>" to job names
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), cj.Name, "must be no more than 52 characters"))
	}
	return errs
}

// validateTimeZone: an IANA zone name this binary knows, not "Local".
func validateTimeZone(tz *string, path *field.Path) field.ErrorList {
	switch {
	case *tz == "":
		return field.ErrorList{field.Invalid(path, tz, "timeZone must be nil or non-empty string")}
	case strings.EqualFold(*tz, "Local"):
		return field.ErrorList{field.Invalid(path, tz, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones")}
	}
	if _, err := time.LoadLocation(*tz); err != nil {
		return field.ErrorList{field.Invalid(path, tz, "unknown time zone "+*tz)}
	}
	return nil
}

func equalPtr[T comparable](a, b *T) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}
