package raftstore

import (
	"bytes"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/litek8s/litek8s/internal/kv"
)

// eventually polls cond every 10ms until it returns nil or timeout passes,
// then fails the test with the last error.
func eventually(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met after %v: %v", timeout, err)
		}
		<-tick.C
	}
}

// checkNoGoroutineLeak returns a function that waits (with a deadline) until
// the number of goroutines is back to what it is now. Goroutines parked in
// await's waiter are not counted: a future still queued in Raft's apply
// channel (or its FSM queue) when Raft shuts down is never answered, and
// Store.await documents that one waiter per such write is left behind so
// that Close does not hang. Anything else still running is a leak.
func checkNoGoroutineLeak(t testing.TB) func() {
	t.Helper()
	before := liveGoroutines()
	return func() {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			n := liveGoroutines()
			if n <= before {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Errorf("goroutine leak: %d before, %d after\n%s", before, n, buf)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// liveGoroutines counts the goroutines except those waiting in await for a
// future Raft will never answer.
func liveGoroutines() int {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if len(bytes.TrimSpace(g)) == 0 {
			continue
		}
		if bytes.Contains(g, []byte("raft.(*deferError).Error")) && bytes.Contains(g, []byte("raftstore.(*Store).await.func1")) {
			continue
		}
		n++
	}
	return n
}

// configMap returns a ConfigMap the way admission writes it: kind and
// apiVersion first, Go-struct-ordered metadata, no resourceVersion. pad
// bytes of data make it bigger.
func configMap(ns, name, uid string, labels map[string]string, pad int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":%q,"namespace":%q,"uid":%q,"creationTimestamp":"2024-05-01T10:00:00Z"`, name, ns, uid)
	if len(labels) > 0 {
		keys := make([]string, 0, len(labels))
		for k := range labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString(`,"labels":{`)
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q:%q", k, labels[k])
		}
		b.WriteByte('}')
	}
	fmt.Fprintf(&b, `},"data":{"config.yaml":%q}}`, strings.Repeat("x", pad))
	return b.Bytes()
}

// fsmHarness drives an fsm with log entries of increasing index, the way
// raft's FSM goroutine does.
type fsmHarness struct {
	t     testing.TB
	f     *fsm
	index uint64
}

func newHarness(t testing.TB, feedSize, watchBuffer int) *fsmHarness {
	return &fsmHarness{t: t, f: newFSM(nil, feedSize, watchBuffer)}
}

// log returns the next command entry for w.
func (h *fsmHarness) log(w kv.Write) *raft.Log {
	h.index++
	return &raft.Log{Index: h.index, Term: 1, Type: raft.LogCommand, Data: encodeRecord(&w)}
}

// apply applies w as the next log entry and returns the typed result.
func (h *fsmHarness) apply(w kv.Write) (*kv.Object, error) {
	h.t.Helper()
	res, ok := h.f.Apply(h.log(w)).(*applyResult)
	if !ok || res == nil {
		h.t.Fatalf("Apply(%v %v) returned %T, want *applyResult", w.Op, w.Key, res)
	}
	return res.obj, res.err
}

// mustApply applies w and fails the test on an error.
func (h *fsmHarness) mustApply(w kv.Write) *kv.Object {
	h.t.Helper()
	obj, err := h.apply(w)
	if err != nil {
		h.t.Fatalf("Apply(%v %v) at %d: %v", w.Op, w.Key, h.index, err)
	}
	return obj
}

// create stores a ConfigMap ns/name with uid "uid-<name>".
func (h *fsmHarness) create(ns, name string) *kv.Object {
	h.t.Helper()
	return h.mustApply(kv.Write{Op: kv.OpCreate, Key: cmKey(ns, name),
		Object: configMap(ns, name, "uid-"+name, nil, 8)})
}

func cmKey(ns, name string) kv.Key {
	return kv.Key{Resource: "configmaps", Namespace: ns, Name: name}
}

// dumpEntry is the observable state of one stored object.
type dumpEntry struct {
	Raw string
	RV  uint64
}

// dumpFSM returns every object of every resource of f.
func dumpFSM(f *fsm) map[kv.Key]dumpEntry {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[kv.Key]dumpEntry)
	for _, tbl := range f.objs.tables {
		tbl.tree.Ascend(func(o *kv.Object) bool {
			out[o.Key] = dumpEntry{Raw: string(o.Raw), RV: o.RV}
			return true
		})
	}
	return out
}

// diffDumps describes the first difference between two dumps ("" when equal).
func diffDumps(a, b map[kv.Key]dumpEntry) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d objects vs %d", len(a), len(b))
	}
	for k, va := range a {
		vb, ok := b[k]
		switch {
		case !ok:
			return fmt.Sprintf("%v missing", k)
		case va != vb:
			return fmt.Sprintf("%v: %+v vs %+v", k, va, vb)
		}
	}
	return ""
}

// leftovers holds the events recvEvent took from a watcher but has not
// returned yet (Take hands over every waiting event at once).
var leftovers = struct {
	sync.Mutex
	m map[kv.Watcher][]kv.Event
}{m: map[kv.Watcher][]kv.Event{}}

// take returns w's events not returned yet: the leftovers, then what
// waits, and whether w is still open.
func take(w kv.Watcher) ([]kv.Event, bool) {
	leftovers.Lock()
	evs := leftovers.m[w]
	delete(leftovers.m, w)
	leftovers.Unlock()
	return w.Take(evs)
}

// recvEvent receives one event or fails after a deadline.
func recvEvent(t testing.TB, w kv.Watcher) kv.Event {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		evs, open := take(w)
		if len(evs) > 0 {
			leftovers.Lock()
			leftovers.m[w] = evs[1:]
			leftovers.Unlock()
			return evs[0]
		}
		if !open {
			t.Fatalf("watcher closed early: %v", w.Err())
		}
		select {
		case <-w.Ready():
		case <-timeout:
			t.Fatal("no event within 5s")
		}
	}
}

// drain reads events until the watch ends (with a deadline) and returns
// them.
func drain(t testing.TB, w kv.Watcher) []kv.Event {
	t.Helper()
	var all []kv.Event
	timeout := time.After(5 * time.Second)
	for {
		evs, open := take(w)
		all = append(all, evs...)
		if !open {
			return all
		}
		select {
		case <-w.Ready():
		case <-timeout:
			t.Fatalf("watcher not closed within 5s (%d events read)", len(all))
		}
	}
}

// pending returns the events waiting in w without blocking.
func pending(w kv.Watcher) []kv.Event {
	evs, _ := take(w)
	return evs
}
