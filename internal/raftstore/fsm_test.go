package raftstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"github.com/hashicorp/raft"
	"github.com/tidwall/gjson"

	"github.com/litek8s/litek8s/internal/kv"
)

func TestFSMPreconditions(t *testing.T) {
	key := cmKey("ns", "a")
	obj := configMap("ns", "a", "uid-a", nil, 4)
	tests := []struct {
		name  string
		setup bool // create ns/a (at index 1) first
		w     kv.Write
		want  error
	}{
		{"create new", false, kv.Write{Op: kv.OpCreate, Key: key, Object: obj}, nil},
		{"create twice", true, kv.Write{Op: kv.OpCreate, Key: key, Object: obj}, kv.ErrAlreadyExists},
		{"update missing", false, kv.Write{Op: kv.OpUpdate, Key: key, Object: obj}, kv.ErrNotFound},
		{"delete missing", false, kv.Write{Op: kv.OpDelete, Key: key}, kv.ErrNotFound},
		{"update other namespace missing", true, kv.Write{Op: kv.OpUpdate, Key: cmKey("other", "a"), Object: obj}, kv.ErrNotFound},
		{"update other resource missing", true, kv.Write{Op: kv.OpUpdate, Key: kv.Key{Resource: "secrets", Namespace: "ns", Name: "a"}, Object: obj}, kv.ErrNotFound},
		{"update unconditional", true, kv.Write{Op: kv.OpUpdate, Key: key, Object: obj}, nil},
		{"update current rv", true, kv.Write{Op: kv.OpUpdate, Key: key, ExpectedRV: 1, Object: obj}, nil},
		{"update stale rv", true, kv.Write{Op: kv.OpUpdate, Key: key, ExpectedRV: 2, Object: obj}, kv.ErrConflict},
		{"update current uid", true, kv.Write{Op: kv.OpUpdate, Key: key, ExpectedUID: "uid-a", Object: obj}, nil},
		{"update wrong uid", true, kv.Write{Op: kv.OpUpdate, Key: key, ExpectedUID: "uid-b", Object: obj}, kv.ErrConflict},
		{"update right rv wrong uid", true, kv.Write{Op: kv.OpUpdate, Key: key, ExpectedRV: 1, ExpectedUID: "uid-b", Object: obj}, kv.ErrConflict},
		{"delete stale rv", true, kv.Write{Op: kv.OpDelete, Key: key, ExpectedRV: 7}, kv.ErrConflict},
		{"delete wrong uid", true, kv.Write{Op: kv.OpDelete, Key: key, ExpectedUID: "x"}, kv.ErrConflict},
		{"delete with preconditions", true, kv.Write{Op: kv.OpDelete, Key: key, ExpectedRV: 1, ExpectedUID: "uid-a"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, 100, 10)
			if tt.setup {
				h.mustApply(kv.Write{Op: kv.OpCreate, Key: key, Object: obj})
			}
			before := dumpFSM(h.f)
			w, err := h.f.watch("configmaps", "", h.index)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()

			got, err := h.apply(tt.w)
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Fatalf("apply = %v, want %v", err, tt.want)
			}
			if h.f.appliedIndex() != h.index {
				t.Errorf("applied = %d, want %d (failed writes still advance it)", h.f.appliedIndex(), h.index)
			}
			evs := pending(w)
			if tt.want != nil {
				if got != nil {
					t.Errorf("failed apply returned object %s", got.Raw)
				}
				if d := diffDumps(before, dumpFSM(h.f)); d != "" {
					t.Errorf("failed apply changed the store: %s", d)
				}
				if len(evs) != 0 {
					t.Errorf("failed apply emitted %d events", len(evs))
				}
				return
			}
			if got == nil || got.RV != h.index {
				t.Fatalf("apply returned %+v, want RV %d", got, h.index)
			}
			if len(evs) != 1 || evs[0].Object != got {
				t.Errorf("events = %+v, want exactly the applied object", evs)
			}
		})
	}
}

func TestFSMUpdateStampsRV(t *testing.T) {
	h := newHarness(t, 100, 10)
	created := h.create("ns", "a")
	h.create("ns", "b") // index 2
	h.index = 40        // raft indexes may jump (noops, barriers)
	upd := configMap("ns", "a", "uid-a", map[string]string{"v": "2"}, 4)
	orig := bytes.Clone(upd)
	got := h.mustApply(kv.Write{Op: kv.OpUpdate, Key: cmKey("ns", "a"), ExpectedRV: created.RV, Object: upd})

	if got.RV != 41 {
		t.Errorf("RV = %d, want the log index 41", got.RV)
	}
	if rv := gjson.GetBytes(got.Raw, "metadata.resourceVersion").String(); rv != "41" {
		t.Errorf("metadata.resourceVersion = %q, want \"41\"", rv)
	}
	if !bytes.Equal(got.Raw, spliceRV(upd, 41)) {
		t.Errorf("stored bytes are not the proposed bytes with the RV spliced in:\n%s", got.Raw)
	}
	if !bytes.Equal(upd, orig) {
		t.Errorf("apply modified the proposed bytes")
	}
	if got.Labels.Get("v") != "2" {
		t.Errorf("labels = %v, want v=2", got.Labels)
	}
	// The previous object is untouched (stored bytes are immutable).
	if created.RV != 1 || gjson.GetBytes(created.Raw, "metadata.resourceVersion").String() != "1" {
		t.Errorf("previous object changed: RV %d, %s", created.RV, created.Raw)
	}
	cur, rev := h.f.get(cmKey("ns", "a"))
	if cur != got || rev != 41 {
		t.Errorf("get = %p at %d, want %p at 41", cur, rev, got)
	}
	// A second update with the old RV now conflicts.
	if _, err := h.apply(kv.Write{Op: kv.OpUpdate, Key: cmKey("ns", "a"), ExpectedRV: created.RV, Object: upd}); !errors.Is(err, kv.ErrConflict) {
		t.Errorf("update with the old RV: %v, want ErrConflict", err)
	}
}

func TestFSMEvents(t *testing.T) {
	h := newHarness(t, 100, 10)
	w, err := h.f.watch("configmaps", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	created := h.create("ns", "a")
	updated := h.mustApply(kv.Write{Op: kv.OpUpdate, Key: cmKey("ns", "a"),
		Object: configMap("ns", "a", "uid-a", map[string]string{"x": "y"}, 4)})
	h.index = 9
	deleted := h.mustApply(kv.Write{Op: kv.OpDelete, Key: cmKey("ns", "a"), ExpectedRV: updated.RV})

	evs := pending(w)
	if len(evs) != 3 {
		t.Fatalf("got %d events, want 3", len(evs))
	}
	wantTypes := []kv.EventType{kv.Added, kv.Modified, kv.Deleted}
	for i, ev := range evs {
		if ev.Type != wantTypes[i] {
			t.Errorf("event %d: type %v, want %v", i, ev.Type, wantTypes[i])
		}
	}
	if evs[0].Object != created || evs[0].Prev != nil {
		t.Errorf("ADDED: object %p prev %p, want %p and nil", evs[0].Object, evs[0].Prev, created)
	}
	if evs[1].Object != updated || evs[1].Prev != created {
		t.Errorf("MODIFIED: object %p prev %p, want %p and %p", evs[1].Object, evs[1].Prev, updated, created)
	}
	del := evs[2]
	if del.Object != deleted || del.Prev != updated {
		t.Errorf("DELETED: object %p prev %p, want %p and %p", del.Object, del.Prev, deleted, updated)
	}
	if del.Object.RV != 10 {
		t.Errorf("DELETED RV = %d, want the delete's index 10", del.Object.RV)
	}
	if want := spliceRV(updated.Raw, 10); !bytes.Equal(del.Object.Raw, want) {
		t.Errorf("DELETED carries\n%s\nwant the last state with the delete's RV\n%s", del.Object.Raw, want)
	}
	if del.Object.UID != "uid-a" || del.Object.Labels.Get("x") != "y" {
		t.Errorf("DELETED object lost its derived fields: %+v", del.Object.Derived)
	}
	if obj, _ := h.f.get(cmKey("ns", "a")); obj != nil {
		t.Errorf("object still stored after delete")
	}
	if _, err := h.apply(kv.Write{Op: kv.OpDelete, Key: cmKey("ns", "a")}); !errors.Is(err, kv.ErrNotFound) {
		t.Errorf("second delete: %v, want ErrNotFound", err)
	}
	// Re-creating after a delete works.
	if again := h.create("ns", "a"); again.RV != 12 {
		t.Errorf("re-create RV = %d, want 12", again.RV)
	}
}

func TestFSMCorruptRecordPanics(t *testing.T) {
	good := encodeRecord(&kv.Write{Op: kv.OpCreate, Key: cmKey("ns", "a"), Object: []byte(`{}`)})
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"bad version", append([]byte{9}, good[1:]...)},
		{"bad op", append([]byte{recordVersion, 0}, good[2:]...)},
		{"truncated header", good[:4]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFSM(nil, 10, 10)
			defer func() {
				r := recover()
				if r == nil {
					t.Fatal("Apply of a corrupt record did not panic")
				}
				if s := fmt.Sprint(r); !bytes.Contains([]byte(s), []byte("log entry 3")) {
					t.Errorf("panic %q does not name the log entry", s)
				}
			}()
			f.Apply(&raft.Log{Index: 3, Type: raft.LogCommand, Data: tt.data})
		})
	}
}

func TestFSMApplyBatch(t *testing.T) {
	h := newHarness(t, 100, 10)
	l1 := h.log(kv.Write{Op: kv.OpCreate, Key: cmKey("ns", "a"), Object: configMap("ns", "a", "u", nil, 1)})
	h.index++
	cfg := &raft.Log{Index: h.index, Type: raft.LogConfiguration, Data: []byte("not a record")}
	l3 := h.log(kv.Write{Op: kv.OpCreate, Key: cmKey("ns", "a"), Object: configMap("ns", "a", "u", nil, 1)})
	l4 := h.log(kv.Write{Op: kv.OpCreate, Key: cmKey("ns", "b"), Object: configMap("ns", "b", "u", nil, 1)})

	changed := func() chan struct{} { h.f.mu.Lock(); defer h.f.mu.Unlock(); return h.f.changed }()
	out := h.f.ApplyBatch([]*raft.Log{l1, cfg, l3, l4})
	if len(out) != 4 {
		t.Fatalf("ApplyBatch returned %d results for 4 logs", len(out))
	}
	select {
	case <-changed:
	default:
		t.Errorf("ApplyBatch did not signal the applied index")
	}
	if r, ok := out[0].(*applyResult); !ok || r.err != nil || r.obj.RV != 1 {
		t.Errorf("result 0 = %#v, want object at RV 1", out[0])
	}
	if out[1] != nil {
		t.Errorf("result of the configuration entry = %#v, want nil", out[1])
	}
	if r, ok := out[2].(*applyResult); !ok || !errors.Is(r.err, kv.ErrAlreadyExists) {
		t.Errorf("result 2 = %#v, want ErrAlreadyExists", out[2])
	}
	if r, ok := out[3].(*applyResult); !ok || r.err != nil || r.obj.RV != 4 {
		t.Errorf("result 3 = %#v, want object at RV 4", out[3])
	}
	if got := h.f.appliedIndex(); got != 4 {
		t.Errorf("applied = %d, want 4", got)
	}

	// A batch that ends with a configuration entry still advances applied,
	// and wakes waiters.
	done := make(chan error, 1)
	go func() { done <- h.f.waitApplied(t.Context(), 5) }()
	h.f.ApplyBatch([]*raft.Log{{Index: 5, Type: raft.LogConfiguration}})
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("waitApplied: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waitApplied(5) not woken by a configuration entry")
	}
	if got := h.f.appliedIndex(); got != 5 {
		t.Errorf("applied = %d, want 5", got)
	}
}

func TestFSMWaitApplied(t *testing.T) {
	h := newHarness(t, 100, 10)
	h.create("ns", "a")
	if err := h.f.waitApplied(t.Context(), 1); err != nil {
		t.Errorf("waitApplied(reached index): %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if err := h.f.waitApplied(ctx, 2); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waitApplied(future index) = %v, want DeadlineExceeded", err)
	}
	done := make(chan error, 1)
	go func() { done <- h.f.waitApplied(t.Context(), 3) }()
	h.create("ns", "b") // 2: not enough
	select {
	case err := <-done:
		t.Fatalf("waitApplied(3) returned at 2: %v", err)
	default:
	}
	h.create("ns", "c") // 3
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waitApplied(3) not woken")
	}
}

func TestFSMDerived(t *testing.T) {
	kinded := []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","uid":"u-1","labels":{"app":"web","tier":""}},"data":{}}`)
	tests := []struct {
		name      string
		raw       []byte
		uid       string
		labels    map[string]string
		bodyStart string // what Raw[BodyStart:] starts with ("" means BodyStart 0)
		meta      string // Raw[MetaStart:MetaEnd] without the RV ("" means no metadata)
	}{
		{
			name: "admission order", raw: kinded, uid: "u-1",
			labels:    map[string]string{"app": "web", "tier": ""},
			bodyStart: `"metadata":`,
			meta:      `{"name":"a","namespace":"ns","uid":"u-1","resourceVersion":"1","labels":{"app":"web","tier":""}}`,
		},
		{
			name:      "group version",
			raw:       []byte(`{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"d"},"spec":{}}`),
			bodyStart: `"metadata":`,
			meta:      `{"name":"d","resourceVersion":"1"}`,
		},
		{
			name: "apiVersion first", raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`),
			meta: `{"name":"a","resourceVersion":"1"}`,
		},
		{
			name: "kind and apiVersion only",
			raw:  []byte(`{"kind":"X","apiVersion":"v1"}`),
		},
		{
			name: "whitespace after kind", raw: []byte(`{"kind": "X","apiVersion":"v1","metadata":{}}`),
			meta: `{"resourceVersion":"1"}`,
		},
		{
			name: "no metadata", raw: []byte(`{"id":"m1"}`),
		},
		{
			name: "empty labels", raw: []byte(`{"metadata":{"name":"a","labels":{}}}`),
			labels: map[string]string{},
			meta:   `{"name":"a","resourceVersion":"1","labels":{}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gotResource string
			var gotRaw []byte
			f := newFSM(func(resource string, raw []byte) (map[string]string, kv.Row) {
				gotResource, gotRaw = resource, raw
				return map[string]string{"f": "v"}, kv.MakeRow([]kv.Cell{{JSON: []byte(`"c"`)}})
			}, 10, 10)
			res := f.Apply(&raft.Log{Index: 1, Type: raft.LogCommand,
				Data: encodeRecord(&kv.Write{Op: kv.OpCreate, Key: cmKey("ns", "a"), Object: tt.raw})}).(*applyResult)
			if res.err != nil {
				t.Fatal(res.err)
			}
			obj := res.obj
			if obj.UID != tt.uid {
				t.Errorf("UID = %q, want %q", obj.UID, tt.uid)
			}
			if got := obj.Labels.Map(); !reflect.DeepEqual(got, tt.labels) && (len(got) != 0 || len(tt.labels) != 0) {
				t.Errorf("Labels = %#v, want %#v", obj.Labels, tt.labels)
			}
			if tt.bodyStart == "" {
				if obj.BodyStart != 0 {
					t.Errorf("BodyStart = %d, want 0", obj.BodyStart)
				}
			} else {
				body := obj.Raw[obj.BodyStart:]
				if !bytes.HasPrefix(body, []byte(tt.bodyStart)) {
					t.Errorf("Raw[BodyStart:] = %s, want prefix %s", body, tt.bodyStart)
				}
				if item := append([]byte("{"), body...); !json.Valid(item) {
					t.Errorf("list item form is not valid JSON: %s", item)
				}
			}
			if tt.meta == "" {
				if obj.MetaStart != 0 || obj.MetaEnd != 0 {
					t.Errorf("metadata span = [%d,%d), want none", obj.MetaStart, obj.MetaEnd)
				}
			} else if got := string(obj.Raw[obj.MetaStart:obj.MetaEnd]); got != tt.meta {
				t.Errorf("Raw[MetaStart:MetaEnd] = %s, want %s", got, tt.meta)
			}
			if gotResource != "configmaps" || !bytes.Equal(gotRaw, obj.Raw) {
				t.Errorf("derive called with %q %s, want the stored bytes", gotResource, gotRaw)
			}
			if obj.Fields["f"] != "v" || obj.Cells.Len() != 1 {
				t.Errorf("derived fields/cells not stored: %v %v", obj.Fields, obj.Cells)
			}
		})
	}
}

func TestWatchReplay(t *testing.T) {
	h := newHarness(t, 100, 10)
	h.create("ns", "a")                                                                                                        // 1
	h.create("other", "b")                                                                                                     // 2
	h.mustApply(kv.Write{Op: kv.OpCreate, Key: kv.Key{Resource: "secrets", Namespace: "ns", Name: "s"}, Object: []byte(`{}`)}) // 3
	h.mustApply(kv.Write{Op: kv.OpUpdate, Key: cmKey("ns", "a"), Object: configMap("ns", "a", "uid-a", nil, 2)})               // 4
	h.mustApply(kv.Write{Op: kv.OpDelete, Key: cmKey("other", "b")})                                                           // 5
	h.create("ns", "c")                                                                                                        // 6

	tests := []struct {
		name      string
		namespace string
		rev       uint64
		want      []uint64
	}{
		{"all from 0", "", 0, []uint64{1, 2, 4, 5, 6}},
		{"all from 2", "", 2, []uint64{4, 5, 6}},
		{"all from a non-event index", "", 3, []uint64{4, 5, 6}},
		{"namespace from 0", "ns", 0, []uint64{1, 4, 6}},
		{"namespace from 4", "ns", 4, []uint64{6}},
		{"from the head", "", 6, nil},
		{"from the future", "", 100, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := h.f.watch("configmaps", tt.namespace, tt.rev)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			var got []uint64
			for _, ev := range pending(w) {
				got = append(got, ev.Object.RV)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("replayed RVs %v, want %v", got, tt.want)
			}
		})
	}

	// After the replay the watcher follows live events, filtered.
	w, err := h.f.watch("configmaps", "ns", 4)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if ev := recvEvent(t, w); ev.Object.RV != 6 {
		t.Fatalf("replay: RV %d, want 6", ev.Object.RV)
	}
	h.create("other", "x")                                                                                                     // 7: other namespace
	h.mustApply(kv.Write{Op: kv.OpCreate, Key: kv.Key{Resource: "secrets", Namespace: "ns", Name: "t"}, Object: []byte(`{}`)}) // 8
	h.create("ns", "y")                                                                                                        // 9
	if ev := recvEvent(t, w); ev.Object.RV != 9 || ev.Object.Key != cmKey("ns", "y") {
		t.Fatalf("live: %v at %d, want ns/y at 9", ev.Object.Key, ev.Object.RV)
	}
	if evs := pending(w); len(evs) != 0 {
		t.Errorf("unexpected extra events %v", evs)
	}
}

func TestWatchExpired(t *testing.T) {
	h := newHarness(t, 4, 10)
	for i := range 10 {
		h.create("ns", strconv.Itoa(i)) // RVs 1..10; the ring keeps 7..10
	}
	if got := h.f.feed.oldestAvailable(); got != 6 {
		t.Fatalf("oldestAvailable = %d, want 6", got)
	}
	for _, rev := range []uint64{0, 1, 5} {
		if _, err := h.f.watch("configmaps", "", rev); !errors.Is(err, kv.ErrExpired) {
			t.Errorf("watch from %d = %v, want ErrExpired", rev, err)
		}
	}
	w, err := h.f.watch("configmaps", "", 6)
	if err != nil {
		t.Fatalf("watch from the window's floor: %v", err)
	}
	defer w.Stop()
	var got []uint64
	for _, ev := range pending(w) {
		got = append(got, ev.Object.RV)
	}
	if want := []uint64{7, 8, 9, 10}; !reflect.DeepEqual(got, want) {
		t.Errorf("replayed %v, want %v", got, want)
	}
}

func TestWatcherOverflow(t *testing.T) {
	h := newHarness(t, 100, 2)
	slow, err := h.f.watch("configmaps", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Stop()
	other, err := h.f.watch("configmaps", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Stop()

	// Apply must never block on a watcher that does not read.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 5 {
			h.create("ns", strconv.Itoa(i))
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Apply blocked on a full watcher")
	}
	evs := drain(t, slow)
	if len(evs) != 2 || evs[0].Object.RV != 1 || evs[1].Object.RV != 2 {
		t.Errorf("slow watcher got %d events before ending, want RVs 1,2", len(evs))
	}
	if err := slow.Err(); !errors.Is(err, kv.ErrExpired) {
		t.Errorf("Err() = %v, want ErrExpired", err)
	}
	if got := len(drain(t, other)); got != 2 {
		t.Errorf("other watcher got %d events, want 2", got)
	}
	h.f.mu.Lock()
	n := len(h.f.feed.watchers)
	h.f.mu.Unlock()
	if n != 0 {
		t.Errorf("%d resources still have watchers registered", n)
	}
	slow.Stop() // after the end: keeps ErrExpired
	if err := slow.Err(); !errors.Is(err, kv.ErrExpired) {
		t.Errorf("Err() after Stop = %v, want ErrExpired", err)
	}
}

func TestWatcherStop(t *testing.T) {
	h := newHarness(t, 100, 10)
	w, err := h.f.watch("configmaps", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	h.create("ns", "a")
	w.Stop()
	w.Stop() // idempotent
	if err := w.Err(); err != nil {
		t.Errorf("Err() after Stop = %v, want nil", err)
	}
	if evs := drain(t, w); len(evs) != 1 {
		t.Errorf("buffered events after Stop: %d, want 1", len(evs))
	}
	h.create("ns", "b") // must not panic sending on the closed channel
	h.f.mu.Lock()
	n := len(h.f.feed.watchers)
	h.f.mu.Unlock()
	if n != 0 {
		t.Errorf("stopped watcher still registered")
	}
}

// TestDeriveMetaSharesRaw: the uid is a string over the stored bytes, not a
// copy; a uid written with an escape (never by the API) is decoded.
func TestDeriveMetaSharesRaw(t *testing.T) {
	var lb kv.LabelsBuilder
	obj := &kv.Object{Key: kv.Key{Resource: "configmaps", Namespace: "ns-1", Name: "cm-a"},
		Raw: []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm-a","namespace":"ns-1","uid":"u-1","labels":{"x":"y"}}}`)}
	deriveMeta(obj, &lb)
	for _, s := range []struct{ name, got, want string }{{"uid", obj.UID, "u-1"}, {"name", obj.Key.Name, "cm-a"}, {"namespace", obj.Key.Namespace, "ns-1"}} {
		i := bytes.Index(obj.Raw, []byte(`"`+s.want+`"`)) + 1
		if s.got != s.want || unsafe.StringData(s.got) != &obj.Raw[i] {
			t.Fatalf("%s %q is not the stored bytes at %d", s.name, s.got, i)
		}
	}
	if obj.Labels.Get("x") != "y" || obj.Labels.Len() != 1 {
		t.Fatalf("labels %s", obj.Labels)
	}
	esc := &kv.Object{Raw: []byte(`{"metadata":{"uid":"u\u002d2"}}`)}
	deriveMeta(esc, &lb)
	if esc.UID != "u-2" || esc.Labels.Len() != 0 {
		t.Fatalf("escaped uid: %q, labels %s", esc.UID, esc.Labels)
	}
}

// TestWatcherQueueHoldsOnlyTheBacklog: a watcher's queue grows with what
// it has not taken, in order, and a burst's backlog is let go once taken
// (an idle watcher holds no buffer).
func TestWatcherQueueHoldsOnlyTheBacklog(t *testing.T) {
	h := newHarness(t, 1000, 1000)
	w, err := h.f.watch("configmaps", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	queued := func() int {
		w.qmu.Lock()
		defer w.qmu.Unlock()
		return cap(w.queue)
	}
	if c := queued(); c != 0 {
		t.Fatalf("a new watcher's queue holds %d", c)
	}
	for i := range 500 {
		h.create("ns", strconv.Itoa(i))
	}
	select {
	case <-w.Ready():
	default:
		t.Fatal("500 events waiting and Ready says nothing")
	}
	evs, open := w.Take(nil)
	if !open || len(evs) != 500 {
		t.Fatalf("Take: %d events, open %v; want 500, true", len(evs), open)
	}
	for i, ev := range evs {
		if ev.Object.RV != uint64(i+1) {
			t.Fatalf("event %d at RV %d, want %d", i, ev.Object.RV, i+1)
		}
	}
	h.create("ns", "after")
	if evs, _ := w.Take(evs[:0]); len(evs) != 1 || evs[0].Object.RV != 501 {
		t.Fatalf("after the burst: %d events, want RV 501", len(evs))
	}
	if c := queued(); c > queueKept {
		t.Errorf("after the burst was taken the queue keeps %d slots, want <= %d", c, queueKept)
	}
}

// A watch of every resource ("") replays and then follows the changes of
// all resources, in revision order, from the revision it starts at.
func TestWatchEveryResource(t *testing.T) {
	h := newHarness(t, 1000, 1000)
	secret := func(name string) kv.Write {
		return kv.Write{Op: kv.OpCreate, Key: kv.Key{Resource: "secrets", Namespace: "ns", Name: name},
			Object: []byte(`{"kind":"Secret","apiVersion":"v1","metadata":{"name":"` + name + `","namespace":"ns","uid":"u-` + name + `"}}`)}
	}
	h.create("ns", "a")       // 1: before the watch's revision
	h.mustApply(secret("s1")) // 2: replayed
	h.create("ns", "b")       // 3: replayed
	w, err := h.f.watch("", "", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	h.mustApply(secret("s2")) // 4: followed
	h.create("other", "c")    // 5: followed, another namespace
	<-w.Ready()
	evs, open := w.Take(nil)
	var got []string
	for _, ev := range evs {
		got = append(got, fmt.Sprintf("%d %s %s", ev.Object.RV, ev.Object.Key.Resource, ev.Object.Key.Name))
	}
	want := []string{"2 secrets s1", "3 configmaps b", "4 secrets s2", "5 configmaps c"}
	if !open || !slices.Equal(got, want) {
		t.Errorf("events %q (open %v), want %q", got, open, want)
	}
}
