package stats

import (
	"math"
	"slices"
	"time"
)

// Percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// sorted: the smallest value such that at least p% of the values are at or
// below it. sorted must be in ascending order; an empty slice gives 0.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// Median returns the median of xs (the mean of the two middle values for an
// even count) without reordering xs; an empty slice gives 0.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Summary is what one run of one scenario reports.
type Summary struct {
	Ops           int
	Elapsed       time.Duration
	OpsPerSec     float64
	P50, P90, P99 time.Duration
	Max           time.Duration
}

// Summarize sorts latencies in place and summarizes a run of len(latencies)
// operations that took elapsed.
func Summarize(latencies []time.Duration, elapsed time.Duration) Summary {
	slices.Sort(latencies)
	s := Summary{Ops: len(latencies), Elapsed: elapsed,
		P50: Percentile(latencies, 50), P90: Percentile(latencies, 90), P99: Percentile(latencies, 99)}
	if n := len(latencies); n > 0 {
		s.Max = latencies[n-1]
	}
	if elapsed > 0 {
		s.OpsPerSec = float64(len(latencies)) / elapsed.Seconds()
	}
	return s
}
