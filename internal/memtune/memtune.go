// Package memtune keeps a member's memory close to what it holds live.
//
// Go's collector lets the heap grow to twice its live bytes before the
// next collection (GOGC=100). For a member that holds 100,000 objects that
// doubles its RSS: most of a member's heap is the stored objects, live for
// as long as the member runs. The tuner lowers GOGC as the live heap
// grows, so that the heap may grow past its live bytes by about Headroom
// (between MinPercent and 100 percent of it) before a collection: a
// member of a few MiB keeps Go's default, one of 1 GiB collects after
// ~100 MiB of garbage. Collections of a heap that is mostly stored JSON
// are cheap: byte slices hold no pointers and are not scanned.
//
// A soft memory limit (debug.SetMemoryLimit, GOMEMLIMIT) is set from
// Config.Limit, or from the cgroup's memory limit (a container's
// resources.limits.memory) when there is one.
//
// GOGC and the memory limit are per process: cmd/node starts one tuner.
// When GOGC is set in the environment the tuner leaves GOGC alone.
//
// Concurrency: the tuner runs in the runtime's finalizer goroutine after
// every collection; Stop may be called from any goroutine.
package memtune

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
)

// Config tunes the collector.
type Config struct {
	// Headroom is how much the heap may grow past its live bytes before
	// a collection, once the live heap is larger than it (0: Go's
	// default GOGC, untuned).
	Headroom int64
	// MinPercent bounds GOGC from below (collections stay at most every
	// MinPercent% of the live heap allocated). Default 10.
	MinPercent int
	// Limit is the soft memory limit in bytes (0: from the cgroup, 90%
	// of its memory.max when it has one; negative: none).
	Limit int64
}

// Tuner adjusts GOGC after every collection until stopped.
type Tuner struct {
	cfg     Config
	stopped atomic.Bool
	percent atomic.Int64 // last GOGC set (0 before the first collection)
	sample  []metrics.Sample
	limit   int64
}

// Start applies the memory limit and starts tuning GOGC. It returns the
// tuner (Stop restores GOGC to 100) and the limit set (0: none).
func Start(cfg Config) *Tuner {
	if cfg.MinPercent <= 0 {
		cfg.MinPercent = 10
	}
	t := &Tuner{cfg: cfg, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	t.limit = cfg.Limit
	if t.limit == 0 && os.Getenv("GOMEMLIMIT") == "" {
		if l, ok := cgroupLimit(); ok {
			t.limit = l / 10 * 9
		}
	}
	if t.limit > 0 {
		debug.SetMemoryLimit(t.limit)
	} else {
		t.limit = 0
	}
	if cfg.Headroom > 0 && os.Getenv("GOGC") == "" {
		t.arm()
	}
	return t
}

// Limit returns the soft memory limit set at start (0: none).
func (t *Tuner) Limit() int64 { return t.limit }

// Percent returns the GOGC the tuner set last (0: none yet).
func (t *Tuner) Percent() int { return int(t.percent.Load()) }

// Stop stops tuning and restores Go's default GOGC.
func (t *Tuner) Stop() {
	if t.stopped.Swap(true) {
		return
	}
	if t.percent.Load() != 0 {
		debug.SetGCPercent(100)
	}
}

// arm registers a finalizer on a fresh object: it runs after the next
// collection that finds the object unreachable, that is after every
// collection, and re-arms itself.
func (t *Tuner) arm() {
	sentinel := new([16]byte)
	runtime.SetFinalizer(sentinel, func(*[16]byte) {
		if t.stopped.Load() {
			return
		}
		t.tune()
		t.arm()
	})
}

// tune sets GOGC for the live heap the last collection found.
func (t *Tuner) tune() {
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	p := Percent(t.sample[0].Value.Uint64(), t.cfg.Headroom, t.cfg.MinPercent)
	if int64(p) != t.percent.Load() {
		debug.SetGCPercent(p)
		t.percent.Store(int64(p))
	}
}

// Percent is the GOGC that lets a heap of live bytes grow by headroom,
// between minPercent and 100.
func Percent(live uint64, headroom int64, minPercent int) int {
	if live == 0 || headroom <= 0 {
		return 100
	}
	p := math.Ceil(100 * float64(headroom) / float64(live))
	return int(max(float64(minPercent), min(100, p)))
}

// cgroupLimit reads this process's cgroup memory limit: v2's memory.max,
// else v1's memory.limit_in_bytes. No limit ("max", or v1's huge value):
// false.
func cgroupLimit() (int64, bool) {
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		return parseLimit(string(b))
	}
	return 0, false
}

// parseLimit parses a cgroup limit file's content.
func parseLimit(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= 1<<60 {
		return 0, false // "max", or v1's "no limit" (PAGE_COUNTER_MAX pages)
	}
	return n, true
}

// ReleaseFree returns the heap's free memory to the system
// (debug.FreeOSMemory: a collection, then every free page released) when
// at least minFree bytes of it are free and not yet released, and returns
// how many were. The runtime's scavenger gives free pages back slowly, a
// bounded amount per second: after a burst (a fill of 100,000 objects, a
// relist) tens of MiB stay in the RSS for minutes. Call it every several
// seconds at most (node: 15 s): the collection costs a mark of the live
// heap (the pointer-free stored JSON is not scanned).
func ReleaseFree(minFree uint64) uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	free := s[0].Value.Uint64()
	if free < minFree || free == 0 {
		return 0
	}
	debug.FreeOSMemory()
	return free
}
