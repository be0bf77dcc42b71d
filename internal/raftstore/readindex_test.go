package raftstore

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestReadIndexerRoundsStartAfterTheirCallers: every caller gets the
// answer of a round that started after it called (else a write
// acknowledged just before its read could be missed), no more than
// maxRounds rounds run at once, and concurrent callers share rounds.
func TestReadIndexerRoundsStartAfterTheirCallers(t *testing.T) {
	var started, inFlight, most atomic.Int64
	fetch := func(ctx context.Context) (uint64, error) {
		n := started.Add(1) // the round's number, in start order
		cur := inFlight.Add(1)
		for m := most.Load(); cur > m && !most.CompareAndSwap(m, cur); m = most.Load() {
		}
		time.Sleep(2 * time.Millisecond)
		inFlight.Add(-1)
		return uint64(n), nil
	}
	r := newReadIndexer(fetch)
	defer r.close()
	const callers, calls = 32, 40
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for range calls {
				before := started.Load() // rounds started before this call
				idx, err := r.get(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				if idx <= uint64(before) {
					t.Errorf("answered by round %d, which started before the call (after %d)", idx, before)
					return
				}
			}
		})
	}
	wg.Wait()
	if m := most.Load(); m > maxRounds {
		t.Errorf("%d rounds in flight at once, want at most %d", m, maxRounds)
	}
	if n := started.Load(); n >= callers*calls/2 {
		t.Errorf("%d rounds for %d calls: not coalesced", n, callers*calls)
	}
	t.Logf("%d rounds for %d calls, at most %d at once", started.Load(), callers*calls, most.Load())
}
