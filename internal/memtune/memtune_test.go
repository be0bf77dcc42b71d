package memtune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live     uint64
		headroom int64
		want     int
	}{
		{0, 32 * mib, 100},
		{8 * mib, 32 * mib, 100},    // small heaps keep Go's default
		{32 * mib, 32 * mib, 100},   // headroom = live: 100%
		{128 * mib, 32 * mib, 25},   // 128 MiB may grow by 32
		{100 * mib, 32 * mib, 32},   // rounded up
		{1024 * mib, 32 * mib, 10},  // at least MinPercent
		{1024 * mib, 0, 100},        // untuned
		{300 * mib, 64 * mib, 22},   // ceil(21.33)
		{10 << 30, 64 * mib, 10},    // 10 GiB
		{64*mib + 1, 64 * mib, 100}, // just above: ceil(99.99…)
		{65 * mib, 64 * mib, 99},    // 98.46 → 99
		{640 * mib, 64 * mib, 10},   // exactly 10
		{641 * mib, 64 * mib, 10},   // below 10 → MinPercent
		{2 * 1024 * mib, 512 * mib, 25},
	} {
		if got := Percent(c.live, c.headroom, 10); got != c.want {
			t.Errorf("Percent(%d MiB, %d MiB) = %d, want %d", c.live/mib, c.headroom/mib, got, c.want)
		}
	}
}

func TestParseLimit(t *testing.T) {
	for in, want := range map[string]int64{"max\n": 0, "536870912\n": 512 << 20, "9223372036854771712\n": 0, "": 0, "0": 0} {
		got, ok := parseLimit(in)
		if got != want || ok != (want > 0) {
			t.Errorf("parseLimit(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
}

// TestTunerFollowsLiveHeap: with 96 MiB live and 16 MiB of headroom the
// tuner sets GOGC to 17 after a collection, and Stop restores 100.
func TestTunerFollowsLiveHeap(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	tu := Start(Config{Headroom: 16 << 20, Limit: -1})
	keep := make([][]byte, 96)
	for i := range keep {
		keep[i] = make([]byte, 1<<20)
	}
	deadline := time.Now().Add(10 * time.Second)
	for tu.Percent() < 15 || tu.Percent() > 20 {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC %d after collections with ~96 MiB live, want ~17", tu.Percent())
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the finalizer runs after the collection
	}
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if got := s[0].Value.Uint64(); got < 15 || got > 20 {
		t.Fatalf("the runtime's GOGC is %d, want ~17 (the tuner says %d)", got, tu.Percent())
	}
	tu.Stop()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC %d after Stop, want 100", got)
	}
	runtime.KeepAlive(keep)
}

// TestReleaseFree: 64 MiB allocated and dropped stay free in the heap
// until ReleaseFree gives them back; below its threshold it does nothing.
func TestReleaseFree(t *testing.T) {
	free := func() uint64 {
		s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	garbage := make([][]byte, 64)
	for i := range garbage {
		garbage[i] = make([]byte, 1<<20)
	}
	runtime.KeepAlive(garbage)
	garbage = nil
	runtime.GC()
	if got := ReleaseFree(1 << 62); got != 0 {
		t.Fatalf("ReleaseFree below its threshold released %d bytes", got)
	}
	before := free()
	if before < 32<<20 {
		t.Fatalf("only %d bytes free after dropping 64 MiB (the background scavenger releases a few MiB a second)", before)
	}
	if got := ReleaseFree(16 << 20); got < 32<<20 {
		t.Fatalf("ReleaseFree released %d bytes with %d free", got, before)
	}
	if after := free(); after > before/4 {
		t.Fatalf("heap free %d → %d bytes after ReleaseFree", before, after)
	}
}
