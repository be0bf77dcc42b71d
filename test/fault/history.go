package fault

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Outcome of an operation as its client saw it.
type Outcome int

const (
	// OK: acknowledged, with a resourceVersion.
	OK Outcome = iota
	// Failed: refused with a definite answer (e.g. 409, 422): not done.
	Failed
	// Unknown: a timeout, a reset, a 5xx: maybe done, maybe not.
	Unknown
)

// Op is one write a client made: a create of a new object (the suite's
// writes have unique names, so each key is written once, which is what
// makes a missing or changed object a loss).
type Op struct {
	Client     string
	Member     string // the member the client sent it to
	Key        string // namespace/name
	Start, End time.Time
	Outcome    Outcome
	RV         uint64 // when OK
	Err        string // when not OK
}

// Event is one watch event a watcher received.
type Event struct {
	Type string // ADDED, MODIFIED, DELETED, ERROR
	Key  string
	RV   uint64
	Code int    // for ERROR: the Status code (410 Expired)
	Msg  string // for ERROR: the Status message
}

// Watch is what one watcher saw, from its start revision.
type Watch struct {
	Member string
	From   uint64
	Events []Event
}

// History records the suite's operations; safe for concurrent use.
type History struct {
	mu      sync.Mutex
	ops     []Op
	watches []*Watch
}

// Add records an operation.
func (h *History) Add(op Op) {
	h.mu.Lock()
	h.ops = append(h.ops, op)
	h.mu.Unlock()
}

// AddWatch records a watch (its events are appended by its owner until
// Check).
func (h *History) AddWatch(w *Watch) {
	h.mu.Lock()
	h.watches = append(h.watches, w)
	h.mu.Unlock()
}

// Counts returns how many operations ended each way.
func (h *History) Counts() (ok, failed, unknown int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, op := range h.ops {
		switch op.Outcome {
		case OK:
			ok++
		case Failed:
			failed++
		default:
			unknown++
		}
	}
	return ok, failed, unknown
}

// FirstAckAfter returns how long after t0 the first write started at or
// after t0 was acknowledged (ok false: none yet).
func (h *History) FirstAckAfter(t0 time.Time) (d time.Duration, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, op := range h.ops {
		if op.Outcome == OK && !op.Start.Before(t0) && (!ok || op.End.Sub(t0) < d) {
			d, ok = op.End.Sub(t0), true
		}
	}
	return d, ok
}

// LongestAckGap is the longest time between two acknowledgements (or from
// to the first, or the last to to) of writes that ended between from and to.
func (h *History) LongestAckGap(from, to time.Time) time.Duration {
	h.mu.Lock()
	ends := []time.Time{from, to}
	for _, op := range h.ops {
		if op.Outcome == OK && op.End.After(from) && op.End.Before(to) {
			ends = append(ends, op.End)
		}
	}
	h.mu.Unlock()
	slices.SortFunc(ends, func(a, b time.Time) int { return a.Compare(b) })
	var gap time.Duration
	for i := 1; i < len(ends); i++ {
		gap = max(gap, ends[i].Sub(ends[i-1]))
	}
	return gap
}

// State is what one member holds at the end: key → resourceVersion.
type State map[string]uint64

// Check checks the history against the members' final states (each read
// after the cluster healed and converged):
//
//   - every acknowledged write is on every member with its acknowledged
//     resourceVersion;
//   - no two members disagree on any object (same keys, same versions);
//   - every object a member holds was written by a client (acknowledged,
//     or with an unknown outcome): nothing appears from nowhere, and a
//     write refused with a definite answer is not there;
//   - no two acknowledged writes got the same resourceVersion, and a
//     client's acknowledged writes got growing resourceVersions in the
//     order it made them;
//   - each watch saw, in order of resourceVersion and without a gap, every
//     object of the final state with a resourceVersion after its start, up
//     to where it stopped, or ended with 410 (never a silent gap).
//
// It returns every violation found (nil: none).
func (h *History) Check(states map[string]State) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var bad []string
	members := slices.Sorted(maps.Keys(states))
	// members agree
	for _, m := range members[1:] {
		if d := diff(states[members[0]], states[m]); d != "" {
			bad = append(bad, fmt.Sprintf("members %s and %s disagree: %s", members[0], m, d))
		}
	}
	written := map[string]Op{}
	byRV := map[uint64]string{}
	lastRV := map[string]uint64{} // client → RV of its previous acknowledged write
	ops := slices.Clone(h.ops)
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Start.Before(ops[j].Start) })
	for _, op := range ops {
		if prev, ok := written[op.Key]; ok && prev.Outcome != Failed {
			bad = append(bad, fmt.Sprintf("key %s written twice (%s and %s): the suite's keys are unique", op.Key, prev.Client, op.Client))
		}
		written[op.Key] = op
		if op.Outcome != OK {
			continue
		}
		if other, dup := byRV[op.RV]; dup {
			bad = append(bad, fmt.Sprintf("resourceVersion %d acknowledged for %s and %s", op.RV, other, op.Key))
		}
		byRV[op.RV] = op.Key
		if op.RV <= lastRV[op.Client] {
			bad = append(bad, fmt.Sprintf("client %s: %s acknowledged at %d after an earlier write at %d", op.Client, op.Key, op.RV, lastRV[op.Client]))
		}
		lastRV[op.Client] = op.RV
		for _, m := range members {
			if got, ok := states[m][op.Key]; !ok {
				bad = append(bad, fmt.Sprintf("LOST: %s acknowledged at %d (client %s via %s) is not on %s", op.Key, op.RV, op.Client, op.Member, m))
			} else if got != op.RV {
				bad = append(bad, fmt.Sprintf("%s acknowledged at %d is at %d on %s", op.Key, op.RV, got, m))
			}
		}
	}
	for _, m := range members {
		for key := range states[m] {
			op, ok := written[key]
			switch {
			case !ok:
				bad = append(bad, fmt.Sprintf("%s on %s was never written", key, m))
			case op.Outcome == Failed:
				bad = append(bad, fmt.Sprintf("%s on %s was refused to client %s (%s)", key, m, op.Client, op.Err))
			}
		}
	}
	if len(members) > 0 {
		for _, w := range h.watches {
			bad = append(bad, checkWatch(w, states[members[0]])...)
		}
	}
	return bad
}

// checkWatch: w's events are the final state's objects after w.From, in
// order, without a gap, until it stopped (or a 410).
func checkWatch(w *Watch, final State) []string {
	var want []uint64
	for _, rv := range final {
		if rv > w.From {
			want = append(want, rv)
		}
	}
	slices.Sort(want)
	var bad []string
	i := 0
	for _, ev := range w.Events {
		if ev.Type == "ERROR" {
			if ev.Code != 410 {
				bad = append(bad, fmt.Sprintf("watch on %s from %d: ERROR %d %s", w.Member, w.From, ev.Code, ev.Msg))
			}
			return bad // ended with 410: the client relists, nothing is lost
		}
		if ev.Type != "ADDED" {
			continue // the suite only creates; other events come from controllers
		}
		if i >= len(want) || ev.RV != want[i] {
			exp := "nothing more"
			if i < len(want) {
				exp = fmt.Sprint(want[i])
			}
			return append(bad, fmt.Sprintf("watch on %s from %d: event %d is %s at %d, want %s (a gap or a reordering)",
				w.Member, w.From, i, ev.Key, ev.RV, exp))
		}
		i++
	}
	return bad
}

func diff(a, b State) string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			out = append(out, k+" only in the first")
		} else if w != v {
			out = append(out, fmt.Sprintf("%s at %d and %d", k, v, w))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k+" only in the second")
		}
	}
	slices.Sort(out)
	if len(out) > 5 {
		out = append(out[:5], fmt.Sprintf("(%d more)", len(out)-5))
	}
	return strings.Join(out, "; ")
}

// Dump prints the history (for a failing run).
func (h *History) Dump() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b strings.Builder
	for _, op := range h.ops {
		outcome := map[Outcome]string{OK: "ok", Failed: "failed", Unknown: "unknown"}[op.Outcome]
		fmt.Fprintf(&b, "%s %s %-8s via %-8s %s rv=%d %s (%v)\n", op.Start.Format("15:04:05.000"), outcome, op.Client,
			op.Member, op.Key, op.RV, op.Err, op.End.Sub(op.Start).Round(time.Millisecond))
	}
	for _, w := range h.watches {
		fmt.Fprintf(&b, "watch on %s from %d: %d events\n", w.Member, w.From, len(w.Events))
	}
	return b.String()
}
