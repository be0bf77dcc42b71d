package job

import (
	"fmt"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
)

// matchSuccessPolicy reports whether the succeeded indexes of an Indexed
// job satisfy a rule of its spec.successPolicy, and kube's message naming
// the first rule that does. A rule with succeededIndexes needs all of them
// (or, with succeededCount, that many of them); a rule with only
// succeededCount needs that many indexes of any.
func matchSuccessPolicy(job *batchv1.Job, succeeded map[int]bool) (string, bool) {
	if job.Spec.SuccessPolicy == nil || !indexed(job) {
		return "", false
	}
	for i, r := range job.Spec.SuccessPolicy.Rules {
		have, want := len(succeeded), -1
		if r.SucceededIndexes != nil {
			set, err := parseIndexes(*r.SucceededIndexes, completions(job))
			if err != nil {
				continue
			}
			have, want = 0, len(set)
			for idx := range set {
				if succeeded[idx] {
					have++
				}
			}
		}
		if r.SucceededCount != nil {
			want = int(*r.SucceededCount)
		}
		if want >= 0 && have >= want {
			return fmt.Sprintf("Matched rules at index %d", i), true
		}
	}
	return "", false
}

func completions(job *batchv1.Job) int {
	if job.Spec.Completions == nil {
		return 0
	}
	return int(*job.Spec.Completions)
}

// parseIndexes parses kube's index list ("1,3-5,7"): ascending,
// non-overlapping indexes and ranges. Indexes at or past limit are left
// out; a malformed list is an error.
func parseIndexes(s string, limit int) (map[int]bool, error) {
	set := map[int]bool{}
	if s == "" {
		return set, nil
	}
	last := -1
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("job: index list %q: bad index %q", s, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("job: index list %q: bad range %q", s, part)
			}
		}
		if a <= last {
			return nil, fmt.Errorf("job: index list %q: not ascending at %q", s, part)
		}
		last = b
		for i := a; i <= b && i < limit; i++ {
			set[i] = true
		}
	}
	return set, nil
}
