package raftstore

import (
	"testing"
	"time"
)

func TestLagTrackerSince(t *testing.T) {
	var tr lagTracker
	t0 := time.Unix(1000, 0)
	for i := range lagSamples + 500 { // wraps the ring
		tr.sample(uint64(10*(i+1)), t0.Add(time.Duration(i)*time.Second))
	}
	if len(tr.samples) != lagSamples {
		t.Fatalf("%d samples kept, want %d", len(tr.samples), lagSamples)
	}
	now := t0.Add(time.Duration(lagSamples+500) * time.Second)
	// sample i holds index 10(i+1) at t0+i s; the oldest kept is i=500
	for _, tc := range []struct {
		index uint64
		want  time.Time
	}{
		{uint64(10 * (lagSamples + 500)), now},                                                 // caught up
		{uint64(10*(lagSamples+500) - 5), t0.Add(time.Duration(lagSamples+498) * time.Second)}, // behind the newest sample
		{10 * 2000, t0.Add(1999 * time.Second)},                                                // between samples
		{1, t0.Add(500 * time.Second)},                                                         // older than every sample: the oldest
	} {
		if got := tr.since(tc.index, now); !got.Equal(tc.want) {
			t.Errorf("since(%d) = %v, want %v", tc.index, got.Sub(t0), tc.want.Sub(t0))
		}
	}
	// samples closer than lagSampleEvery, or of an unchanged index, are dropped
	n := len(tr.samples)
	tr.sample(99999999, now.Add(time.Millisecond))
	tr.sample(uint64(10*(lagSamples+500)), now.Add(time.Hour))
	if len(tr.samples) != n || tr.samples[(tr.head+n-1)%n].index != uint64(10*(lagSamples+500)) {
		t.Errorf("dense or unchanged samples were kept")
	}
}
