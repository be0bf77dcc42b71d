package raftstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/tidwall/gjson"

	"github.com/litek8s/litek8s/internal/kv"
)

// memSink is a raft.SnapshotSink that keeps the snapshot in memory; failAt,
// when positive, makes writes fail once that many bytes were written.
type memSink struct {
	bytes.Buffer
	failAt           int
	closed, canceled bool
}

var _ raft.SnapshotSink = (*memSink)(nil)

func (s *memSink) Write(p []byte) (int, error) {
	if s.failAt > 0 && s.Len()+len(p) > s.failAt {
		return 0, errors.New("disk full")
	}
	return s.Buffer.Write(p)
}
func (s *memSink) Close() error  { s.closed = true; return nil }
func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { s.canceled = true; return nil }

// persist takes a snapshot of f and returns its bytes.
func persist(t testing.TB, f *fsm) []byte {
	t.Helper()
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatalf("Persist: %v", err)
	}
	if !sink.closed || sink.canceled {
		t.Fatalf("Persist left the sink closed=%v canceled=%v", sink.closed, sink.canceled)
	}
	return sink.Bytes()
}

// fill applies a mix of writes to two resources (and a cluster-scoped one).
func fill(h *fsmHarness) {
	for i := range 20 {
		h.create("ns"+strconv.Itoa(i%3), "cm"+strconv.Itoa(i))
	}
	h.mustApply(kv.Write{Op: kv.OpUpdate, Key: cmKey("ns1", "cm1"), Object: configMap("ns1", "cm1", "uid-cm1", map[string]string{"a": "b"}, 30)})
	h.mustApply(kv.Write{Op: kv.OpDelete, Key: cmKey("ns2", "cm2")})
	h.mustApply(kv.Write{Op: kv.OpCreate, Key: kv.Key{Resource: "namespaces", Name: "ns1"}, Object: []byte(`{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"ns1","uid":"n1"}}`)})
	h.mustApply(kv.Write{Op: kv.OpCreate, Key: kv.Key{Resource: "_members", Name: "m"}, Object: []byte(`{"id":"m"}`)})
	h.index += 3 // entries the FSM never sees (noop, barrier)
	h.f.ApplyBatch([]*raft.Log{{Index: h.index, Type: raft.LogConfiguration}})
}

func TestSnapshotRestore(t *testing.T) {
	h := newHarness(t, 100, 10)
	fill(h)
	want := dumpFSM(h.f)
	wantApplied := h.f.appliedIndex()

	snap, err := h.f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	// Writes after Snapshot() returns, even while Persist runs, must not
	// leak into the snapshot (nor race with it).
	var wg sync.WaitGroup
	wg.Go(func() {
		for i, w := range []kv.Write{
			{Op: kv.OpCreate, Key: cmKey("ns0", "late"), Object: []byte(`{}`)},
			{Op: kv.OpDelete, Key: cmKey("ns0", "cm0")},
			{Op: kv.OpUpdate, Key: cmKey("ns1", "cm4"), Object: []byte(`{"metadata":{"name":"changed"}}`)},
			{Op: kv.OpCreate, Key: kv.Key{Resource: "secrets", Name: "new"}, Object: []byte(`{}`)},
		} {
			h.f.Apply(&raft.Log{Index: wantApplied + 1 + uint64(i), Type: raft.LogCommand, Data: encodeRecord(&w)})
		}
	})
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	wg.Wait()
	if d := diffDumps(want, dumpFSM(h.f)); d == "" {
		t.Fatal("the writes after the snapshot did not apply")
	}

	restored := newFSM(nil, 100, 10)
	if err := restored.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if d := diffDumps(want, dumpFSM(restored)); d != "" {
		t.Errorf("restored store differs from the store at snapshot time: %s", d)
	}
	if got := restored.appliedIndex(); got != wantApplied {
		t.Errorf("restored applied = %d, want %d", got, wantApplied)
	}
	// Derived data is rebuilt.
	got, _ := restored.get(cmKey("ns1", "cm1"))
	orig := want[cmKey("ns1", "cm1")]
	if got == nil || got.UID != "uid-cm1" || got.Labels.Get("a") != "b" || got.BodyStart == 0 ||
		string(got.Raw[got.MetaStart:got.MetaEnd]) == "" || string(got.Raw) != orig.Raw {
		t.Errorf("restored object lost derived data: %+v", got)
	}
	// The restored store takes new writes at later indexes.
	rh := &fsmHarness{t: t, f: restored, index: wantApplied}
	if obj := rh.create("ns9", "new"); obj.RV != wantApplied+1 {
		t.Errorf("RV after restore = %d, want %d", obj.RV, wantApplied+1)
	}
	if _, err := rh.apply(kv.Write{Op: kv.OpCreate, Key: cmKey("ns1", "cm1"), Object: []byte(`{}`)}); !errors.Is(err, kv.ErrAlreadyExists) {
		t.Errorf("create over a restored object = %v, want ErrAlreadyExists", err)
	}
}

func TestSnapshotEmpty(t *testing.T) {
	f := newFSM(nil, 10, 10)
	data := persist(t, f)
	g := newHarness(t, 10, 10)
	g.create("ns", "stale")
	if err := g.f.Restore(io.NopCloser(bytes.NewReader(data))); err != nil {
		t.Fatal(err)
	}
	if n := len(dumpFSM(g.f)); n != 0 {
		t.Errorf("restore of an empty snapshot left %d objects", n)
	}
	if got := g.f.appliedIndex(); got != 0 {
		t.Errorf("applied = %d, want 0", got)
	}
}

func TestRestoreEndsWatchers(t *testing.T) {
	h := newHarness(t, 100, 10)
	fill(h)
	data := persist(t, h.f)

	target := newHarness(t, 100, 10)
	target.create("ns", "a")
	w1, err := target.f.watch("configmaps", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	w2, err := target.f.watch("secrets", "ns", 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := target.f.Restore(io.NopCloser(bytes.NewReader(data))); err != nil {
		t.Fatal(err)
	}
	for i, w := range []*Watcher{w1, w2} {
		drain(t, w)
		if err := w.Err(); !errors.Is(err, kv.ErrExpired) {
			t.Errorf("watcher %d: Err() = %v, want ErrExpired", i, err)
		}
		w.Stop() // still safe
	}

	// The restored store's window starts at the snapshot index.
	applied := target.f.appliedIndex()
	for _, rev := range []uint64{0, 1, applied - 1} {
		if _, err := target.f.watch("configmaps", "", rev); !errors.Is(err, kv.ErrExpired) {
			t.Errorf("watch from %d (< snapshot index %d) = %v, want ErrExpired", rev, applied, err)
		}
	}
	w, err := target.f.watch("configmaps", "", applied)
	if err != nil {
		t.Fatalf("watch from the snapshot index: %v", err)
	}
	defer w.Stop()
	if evs := pending(w); len(evs) != 0 {
		t.Errorf("watch from the snapshot index replayed %d events", len(evs))
	}
	target.index = applied
	created := target.create("ns", "after")
	if ev := recvEvent(t, w); ev.Object != created {
		t.Errorf("event after restore = %v, want the new object", ev.Object.Key)
	}
}

func TestRestoreBadInput(t *testing.T) {
	h := newHarness(t, 100, 10)
	fill(h)
	data := persist(t, h.f)
	tests := []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"bad magic", append([]byte("not-a-snapshot-1\n"), data[len(snapshotMagic):]...)},
		{"truncated after magic", data[:len(snapshotMagic)]},
		{"truncated in the middle", data[:len(data)/2]},
		{"missing terminator", data[:len(data)-1]},
		{"corrupt record", func() []byte {
			b := bytes.Clone(data)
			off := len(snapshotMagic)
			_, n := binary.Uvarint(b[off:]) // applied index
			off += n
			_, n = binary.Uvarint(b[off:]) // first record's length
			b[off+n] = 99                  // its version byte
			return b
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := newHarness(t, 100, 10)
			kept := target.create("ns", "kept")
			w, err := target.f.watch("configmaps", "", 0)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			if err := target.f.Restore(io.NopCloser(bytes.NewReader(tt.in))); err == nil {
				t.Fatal("Restore succeeded")
			}
			if obj, _ := target.f.get(kept.Key); obj != kept || target.f.appliedIndex() != 1 {
				t.Errorf("failed Restore changed the store")
			}
			if evs := pending(w); len(evs) != 1 {
				t.Errorf("failed Restore ended the watch (%d events, err %v)", len(evs), w.Err())
			}
		})
	}
}

func TestPersistError(t *testing.T) {
	h := newHarness(t, 100, 10)
	for i := range 2000 { // more than the 64 KiB write buffer
		h.create("ns", strconv.Itoa(i))
	}
	snap, err := h.f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{failAt: 100}
	if err := snap.Persist(sink); err == nil {
		t.Fatal("Persist succeeded on a failing sink")
	}
	if !sink.canceled || sink.closed {
		t.Errorf("sink canceled=%v closed=%v, want canceled only", sink.canceled, sink.closed)
	}
}

// BenchmarkSnapshotWrite is a snapshot of 10,000 ConfigMaps streamed out
// (what Persist writes to the sink): its allocations are per snapshot, not
// per object.
func BenchmarkSnapshotWrite(b *testing.B) {
	h := newHarness(b, 100, 10)
	for i := range 10000 {
		h.create("ns", "cm-"+strconv.Itoa(i))
	}
	b.ReportAllocs()
	for b.Loop() {
		snap, err := h.f.Snapshot()
		if err != nil {
			b.Fatal(err)
		}
		if err := snap.(*fsmSnapshot).write(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRestore restores a snapshot of 10,000 ConfigMaps of ~700
// bytes with labels, deriving each one's Table cells from its JSON as the
// API's derive does (a gjson walk of every member): the work a restarted
// member does before it serves.
func BenchmarkRestore(b *testing.B) {
	h := newHarness(b, 100, 10)
	for i := range 10000 {
		name := "cm-" + strconv.Itoa(i)
		h.mustApply(kv.Write{Op: kv.OpCreate, Key: cmKey("ns", name),
			Object: configMap("ns", name, "uid-"+name, map[string]string{"app": "a" + strconv.Itoa(i%10), "tier": "web"}, 600)})
	}
	data := persist(b, h.f)
	f := newFSM(cellsDerive, 100, 10)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := f.Restore(io.NopCloser(bytes.NewReader(data))); err != nil {
			b.Fatal(err)
		}
	}
}

// cellsDerive stands for the API's derive: it walks the object's members
// as Table printers do and packs two cells.
func cellsDerive(_ string, raw []byte) (map[string]string, kv.Row) {
	n := 0
	gjson.ParseBytes(raw).ForEach(func(k, v gjson.Result) bool {
		if k.Str == "data" {
			v.ForEach(func(_, _ gjson.Result) bool { n++; return true })
		}
		return true
	})
	return nil, kv.MakeRow([]kv.Cell{{JSON: strconv.AppendInt(nil, int64(n), 10)}, {Since: time.Unix(1700000000, 0)}})
}
