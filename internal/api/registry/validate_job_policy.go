package registry

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// A Job's policies, validated as kube's validateJobSpec does: the
// per-index backoff fields (Indexed only, maxFailedIndexes needing
// backoffLimitPerIndex and at most completions), spec.successPolicy
// (Indexed only, 1 to 20 rules, each with succeededIndexes, a valid
// ascending index list below completions, and/or a succeededCount within
// completions and the listed indexes) and spec.podFailurePolicy (at most
// 20 rules, a known action, FailIndex only with backoffLimitPerIndex,
// exactly one of onExitCodes and onPodConditions).

const (
	maxSuccessPolicyRules      = 20
	maxSucceededIndexesLen     = 64 * 1024
	maxPodFailurePolicyRules   = 20
	maxOnExitCodesValues       = 255
	maxOnPodConditionsPatterns = 20
	maxFailedIndexesIndexed    = 100_000
)

func validateJobPolicies(sp *batchv1.JobSpec, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	isIndexed := sp.CompletionMode != nil && *sp.CompletionMode == batchv1.IndexedCompletion
	if v := sp.BackoffLimitPerIndex; v != nil {
		errs = append(errs, validateNonnegative(int64(*v), spec.Child("backoffLimitPerIndex"))...)
		if !isIndexed {
			errs = append(errs, field.Invalid(spec.Child("backoffLimitPerIndex"), *v, "requires indexed completion mode"))
		}
	}
	if v := sp.MaxFailedIndexes; v != nil {
		p := spec.Child("maxFailedIndexes")
		errs = append(errs, validateNonnegative(int64(*v), p)...)
		if sp.BackoffLimitPerIndex == nil {
			errs = append(errs, field.Required(spec.Child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
		}
		switch {
		case !isIndexed:
			errs = append(errs, field.Invalid(p, *v, "requires indexed completion mode"))
		case sp.Completions != nil && *v > *sp.Completions:
			errs = append(errs, field.Invalid(p, *v, "must be less than or equal to completions"))
		case *v > maxFailedIndexesIndexed:
			errs = append(errs, field.Invalid(p, *v, fmt.Sprintf("must be less than or equal to %d", maxFailedIndexesIndexed)))
		}
	}
	if sp.SuccessPolicy != nil {
		p := spec.Child("successPolicy")
		if !isIndexed {
			errs = append(errs, field.Invalid(p, *sp.SuccessPolicy, "requires indexed completion mode"))
		} else if sp.Completions != nil {
			errs = append(errs, validateSuccessPolicy(sp.SuccessPolicy, *sp.Completions, p)...)
		}
	}
	if sp.PodFailurePolicy != nil {
		errs = append(errs, validatePodFailurePolicy(sp, spec.Child("podFailurePolicy"))...)
	}
	return errs
}

func validateSuccessPolicy(policy *batchv1.SuccessPolicy, completions int32, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	rules := p.Child("rules")
	switch n := len(policy.Rules); {
	case n == 0:
		errs = append(errs, field.Required(rules, "at least one rules must be specified when the successPolicy is specified"))
	case n > maxSuccessPolicyRules:
		errs = append(errs, field.TooMany(rules, n, maxSuccessPolicyRules))
	}
	for i, r := range policy.Rules {
		rp := rules.Index(i)
		if r.SucceededCount == nil && r.SucceededIndexes == nil {
			errs = append(errs, field.Required(rp, "at least one of succeededCount or succeededIndexes must be specified"))
		}
		total := int32(0)
		if r.SucceededIndexes != nil {
			ip := rp.Child("succeededIndexes")
			if len(*r.SucceededIndexes) > maxSucceededIndexesLen {
				errs = append(errs, field.TooLong(ip, "", maxSucceededIndexesLen))
			}
			var err error
			if total, err = countIndexes(*r.SucceededIndexes, completions); err != nil {
				errs = append(errs, field.Invalid(ip, *r.SucceededIndexes, "error parsing succeededIndexes: "+err.Error()))
			}
		}
		if c := r.SucceededCount; c != nil {
			cp := rp.Child("succeededCount")
			errs = append(errs, validateNonnegative(int64(*c), cp)...)
			if *c > completions {
				errs = append(errs, field.Invalid(cp, *c, fmt.Sprintf("must be less than or equal to %d (the number of specified completions)", completions)))
			}
			if r.SucceededIndexes != nil && *c > total {
				errs = append(errs, field.Invalid(cp, *c, fmt.Sprintf("must be less than or equal to %d (the number of indexes in the specified succeededIndexes field)", total)))
			}
		}
	}
	return errs
}

// countIndexes checks an index list ("0,2-4"): intervals "x" or "x-y"
// with x < y, in increasing order, below completions; it returns how many
// indexes it holds.
func countIndexes(s string, completions int32) (int32, error) {
	if s == "" {
		return 0, nil
	}
	total, last := int32(0), int32(-1)
	for part := range strings.SplitSeq(s, ",") {
		bounds := strings.Split(part, "-")
		if len(bounds) > 2 {
			return 0, fmt.Errorf("the fragment %q violates the requirement that an index interval can have at most two parts separated by '-'", part)
		}
		var xy [2]int32
		for i, b := range bounds {
			n, err := strconv.Atoi(b)
			if err != nil {
				return 0, fmt.Errorf("cannot convert string to integer for index: %q", b)
			}
			if n >= int(completions) {
				return 0, fmt.Errorf("too large index: %q", b)
			}
			xy[i] = int32(n)
		}
		x, y := xy[0], xy[0]
		if len(bounds) == 2 {
			if y = xy[1]; x >= y {
				return 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", x, y)
			}
		}
		if x <= last {
			return 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", last, x)
		}
		total += y - x + 1
		last = y
	}
	return total, nil
}

var (
	podFailurePolicyActions = []batchv1.PodFailurePolicyAction{batchv1.PodFailurePolicyActionCount,
		batchv1.PodFailurePolicyActionFailIndex, batchv1.PodFailurePolicyActionFailJob, batchv1.PodFailurePolicyActionIgnore}
	onExitCodesOperators = []batchv1.PodFailurePolicyOnExitCodesOperator{batchv1.PodFailurePolicyOnExitCodesOpIn,
		batchv1.PodFailurePolicyOnExitCodesOpNotIn}
	conditionStatuses = []corev1.ConditionStatus{corev1.ConditionFalse, corev1.ConditionTrue, corev1.ConditionUnknown}
)

func validatePodFailurePolicy(sp *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	rules := p.Child("rules")
	if n := len(sp.PodFailurePolicy.Rules); n > maxPodFailurePolicyRules {
		errs = append(errs, field.TooMany(rules, n, maxPodFailurePolicyRules))
	}
	var names []string
	for _, c := range slices.Concat(sp.Template.Spec.Containers, sp.Template.Spec.InitContainers) {
		names = append(names, c.Name)
	}
	for i, r := range sp.PodFailurePolicy.Rules {
		rp := rules.Index(i)
		ap := rp.Child("action")
		switch {
		case r.Action == "":
			errs = append(errs, field.Required(ap, fmt.Sprintf("valid values: %q", podFailurePolicyActions)))
		case !slices.Contains(podFailurePolicyActions, r.Action):
			errs = append(errs, field.NotSupported(ap, r.Action, podFailurePolicyActions))
		case r.Action == batchv1.PodFailurePolicyActionFailIndex && sp.BackoffLimitPerIndex == nil:
			errs = append(errs, field.Invalid(ap, r.Action, "requires the backoffLimitPerIndex to be set"))
		}
		if r.OnExitCodes != nil {
			errs = append(errs, validateOnExitCodes(r.OnExitCodes, names, rp.Child("onExitCodes"))...)
		}
		cp := rp.Child("onPodConditions")
		if n := len(r.OnPodConditions); n > maxOnPodConditionsPatterns {
			errs = append(errs, field.TooMany(cp, n, maxOnPodConditionsPatterns))
		}
		for j, pat := range r.OnPodConditions {
			if pat.Type == "" {
				errs = append(errs, field.Required(cp.Index(j).Child("type"), ""))
			}
			if !slices.Contains(conditionStatuses, pat.Status) {
				errs = append(errs, field.NotSupported(cp.Index(j).Child("status"), pat.Status, conditionStatuses))
			}
		}
		switch {
		case r.OnExitCodes != nil && len(r.OnPodConditions) > 0:
			errs = append(errs, field.Invalid(rp, field.OmitValueType{}, "specifying both OnExitCodes and OnPodConditions is not supported"))
		case r.OnExitCodes == nil && len(r.OnPodConditions) == 0:
			errs = append(errs, field.Invalid(rp, field.OmitValueType{}, "specifying one of OnExitCodes and OnPodConditions is required"))
		}
	}
	return errs
}

func validateOnExitCodes(req *batchv1.PodFailurePolicyOnExitCodesRequirement, containers []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if op := p.Child("operator"); req.Operator == "" {
		errs = append(errs, field.Required(op, fmt.Sprintf("valid values: %q", onExitCodesOperators)))
	} else if !slices.Contains(onExitCodesOperators, req.Operator) {
		errs = append(errs, field.NotSupported(op, req.Operator, onExitCodesOperators))
	}
	if n := req.ContainerName; n != nil && !slices.Contains(containers, *n) {
		errs = append(errs, field.Invalid(p.Child("containerName"), *n, "must be one of the container or initContainer names in the pod template"))
	}
	vp := p.Child("values")
	switch n := len(req.Values); {
	case n == 0:
		errs = append(errs, field.Invalid(vp, req.Values, "at least one value is required"))
	case n > maxOnExitCodesValues:
		errs = append(errs, field.TooMany(vp, n, maxOnExitCodesValues))
	}
	for j, v := range req.Values {
		if req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && v == 0 {
			errs = append(errs, field.Invalid(vp.Index(j), v, "must not be 0 for the In operator"))
		}
		if slices.Contains(req.Values[:j], v) {
			errs = append(errs, field.Duplicate(vp.Index(j), v))
		}
	}
	if !slices.IsSorted(req.Values) {
		errs = append(errs, field.Invalid(vp, req.Values, "must be ordered"))
	}
	return errs
}
