package stats

import (
	"testing"
	"time"
)

func ms(xs ...int) []time.Duration {
	out := make([]time.Duration, len(xs))
	for i, x := range xs {
		out[i] = time.Duration(x) * time.Millisecond
	}
	return out
}

func TestPercentile(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one value", ms(7), 99, 7 * time.Millisecond},
		{"one value p50", ms(7), 50, 7 * time.Millisecond},
		{"p50 of 1..100", hundred, 50, 50 * time.Millisecond},
		{"p90 of 1..100", hundred, 90, 90 * time.Millisecond},
		{"p99 of 1..100", hundred, 99, 99 * time.Millisecond},
		{"p100 of 1..100", hundred, 100, 100 * time.Millisecond},
		{"p50 of four", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p99 of four is the max", ms(1, 2, 3, 4), 99, 4 * time.Millisecond},
		{"p1 of four is the min", ms(1, 2, 3, 4), 1, 1 * time.Millisecond},
		{"tiny p never below rank 1", ms(5, 6), 0.0001, 5 * time.Millisecond},
		{"p above 100 clamps", ms(5, 6), 150, 6 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.sorted, tt.p); got != tt.want {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tt.sorted, tt.p, got, tt.want)
			}
		})
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want float64
	}{
		{"empty", nil, 0},
		{"one", []float64{3}, 3},
		{"odd unsorted", []float64{9, 1, 5}, 5},
		{"even takes the mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
		{"outlier ignored", []float64{100, 101, 1e9}, 101},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.xs...)
			if got := Median(tt.xs); got != tt.want {
				t.Errorf("Median(%v) = %v, want %v", tt.xs, got, tt.want)
			}
			for i := range in {
				if in[i] != tt.xs[i] {
					t.Fatalf("Median reordered its input: %v", tt.xs)
				}
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	lat := ms(5, 1, 4, 2, 3, 10, 9, 8, 7, 6)
	s := Summarize(lat, 2*time.Second)
	if s.Ops != 10 || s.OpsPerSec != 5 {
		t.Errorf("ops = %d, ops/s = %v; want 10, 5", s.Ops, s.OpsPerSec)
	}
	if s.P50 != 5*time.Millisecond || s.P90 != 9*time.Millisecond || s.P99 != 10*time.Millisecond || s.Max != 10*time.Millisecond {
		t.Errorf("p50/p90/p99/max = %v/%v/%v/%v; want 5ms/9ms/10ms/10ms", s.P50, s.P90, s.P99, s.Max)
	}
	if z := Summarize(nil, 0); z.OpsPerSec != 0 || z.P99 != 0 {
		t.Errorf("empty run = %+v, want zeros", z)
	}
}
