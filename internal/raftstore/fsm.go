package raftstore

import (
	"fmt"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/hashicorp/raft"
	"github.com/tidwall/gjson"

	"github.com/litek8s/litek8s/internal/kv"
)

// DeriveFunc computes, at apply time, the field-selector values and Table
// cells of an object from its stored bytes (see kv.Derived).
type DeriveFunc func(resource string, raw []byte) (fields map[string]string, cells kv.Row)

// applyResult is what Apply returns to raft for one record; it never leaves
// the package.
type applyResult struct {
	obj *kv.Object
	err error
}

// fsm applies WAL records in log order. Apply is deterministic: it only
// stamps resourceVersion = log index; everything else was decided by the
// leader before proposing.
type fsm struct {
	derive DeriveFunc
	// tr transforms objects from and to their stored form (nil: none). Set
	// before Raft starts, then only read.
	tr Transformer

	// mu guards every field below and the feed's watchers. Lock order: mu is
	// a leaf lock.
	mu      sync.Mutex
	objs    *objects
	feed    *feed
	applied uint64        // index of the last log entry applied
	changed chan struct{} // closed and replaced whenever applied grows

	feedSize, watchBuffer int
	labels                kv.LabelsBuilder // packs labels at apply time (under mu)
	m                     *metrics
	// onApplied, if set, is called with the index and term of each batch's
	// last entry once the batch is applied (outside mu; set before Raft
	// starts).
	onApplied func(index, term uint64)
}

func newFSM(derive DeriveFunc, feedSize, watchBuffer int) *fsm {
	m := noMetrics()
	return &fsm{derive: derive, objs: newObjects(), feed: newFeed(feedSize, watchBuffer, 0, m),
		changed: make(chan struct{}), feedSize: feedSize, watchBuffer: watchBuffer, m: m}
}

// useMetrics makes f count into m (before Raft starts).
func (f *fsm) useMetrics(m *metrics) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.m, f.feed.m = m, m
}

var _ raft.BatchingFSM = (*fsm)(nil)

// Apply applies one log entry.
func (f *fsm) Apply(l *raft.Log) any {
	return f.ApplyBatch([]*raft.Log{l})[0]
}

// ApplyBatch applies committed entries under one lock acquisition.
func (f *fsm) ApplyBatch(logs []*raft.Log) []any {
	out := f.applyBatch(logs)
	if f.onApplied != nil && len(logs) > 0 {
		last := logs[len(logs)-1]
		f.onApplied(last.Index, last.Term)
	}
	return out
}

func (f *fsm) applyBatch(logs []*raft.Log) []any {
	start := time.Now() // for the metrics only: nothing applied depends on it
	out := make([]any, len(logs))
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, l := range logs {
		if l.Type == raft.LogCommand {
			out[i] = f.applyOne(l.Index, l.Data)
		}
		if l.Index > f.applied {
			f.applied = l.Index
		}
	}
	close(f.changed)
	f.changed = make(chan struct{})
	f.m.applyBatch.Observe(float64(len(logs)))
	f.m.apply.Observe(time.Since(start).Seconds())
	return out
}

// applyOne applies one record at index. Caller must hold mu.
func (f *fsm) applyOne(index uint64, data []byte) *applyResult {
	w, err := decodeRecord(data)
	if err != nil {
		panic(fmt.Sprintf("raftstore: log entry %d: %v", index, err)) // a corrupt log
	}
	plain, stale, err := fromStorage(f.tr, w.Key, w.Object)
	if err != nil {
		// Applying nothing would fork this member from the others; storing
		// ciphertext would serve it as an object: stop, loudly.
		panic(fmt.Sprintf("raftstore: log entry %d: %v", index, err))
	}
	w.Object = plain
	cur := f.objs.get(w.Key)
	if err := checkPreconditions(&w, cur); err != nil {
		return &applyResult{err: err}
	}
	switch w.Op {
	case kv.OpCreate:
		return f.applyPut(index, &w, nil, kv.Added, stale)
	case kv.OpUpdate:
		return f.applyPut(index, &w, cur, kv.Modified, stale)
	default:
		return f.applyDelete(index, cur)
	}
}

// checkPreconditions decides AlreadyExists, NotFound and Conflict.
func checkPreconditions(w *kv.Write, cur *kv.Object) error {
	if w.Op == kv.OpCreate {
		if cur != nil {
			return kv.ErrAlreadyExists
		}
		return nil
	}
	if cur == nil {
		return kv.ErrNotFound
	}
	if w.ExpectedRV != 0 && w.ExpectedRV != cur.RV {
		return kv.ErrConflict
	}
	if w.ExpectedUID != "" && w.ExpectedUID != cur.UID {
		return kv.ErrConflict
	}
	return nil
}

func (f *fsm) applyPut(index uint64, w *kv.Write, prev *kv.Object, typ kv.EventType, stale bool) *applyResult {
	obj := f.newObject(w.Key, spliceRV(w.Object, index), index)
	obj.Stale = stale
	f.objs.put(obj)
	f.feed.append(kv.Event{Type: typ, Object: obj, Prev: prev})
	return &applyResult{obj: obj}
}

func (f *fsm) applyDelete(index uint64, cur *kv.Object) *applyResult {
	f.objs.remove(cur.Key, index)
	last := f.newObject(cur.Key, spliceRV(cur.Raw, index), index)
	f.feed.append(kv.Event{Type: kv.Deleted, Object: last, Prev: cur})
	return &applyResult{obj: last}
}

// newObject builds the stored form of raw: everything serving needs is
// derived here, once.
func (f *fsm) newObject(k kv.Key, raw []byte, rv uint64) *kv.Object {
	k.Resource = f.objs.resourceName(k.Resource) // one string per resource, not per object
	return f.deriveObject(k, raw, rv, &f.labels)
}

// deriveObject returns the object of raw with its derived data. It reads
// only f.derive (set once): restore workers call it concurrently, each with
// its own lb.
func (f *fsm) deriveObject(k kv.Key, raw []byte, rv uint64, lb *kv.LabelsBuilder) *kv.Object {
	obj := &kv.Object{Key: k, Raw: raw, RV: rv}
	deriveMeta(obj, lb)
	if f.derive != nil {
		obj.Fields, obj.Cells = f.derive(k.Resource, raw)
	}
	return obj
}

// deriveMeta fills the generic metadata parts of obj.Derived: uid, labels,
// the metadata span and the list-item body offset.
func deriveMeta(obj *kv.Object, lb *kv.LabelsBuilder) {
	meta := gjson.GetBytes(obj.Raw, "metadata")
	if meta.Index > 0 {
		obj.MetaStart, obj.MetaEnd = int32(meta.Index), int32(meta.Index+len(meta.Raw))
	}
	// GetBytes copies the metadata into meta.Raw and what ForEach gives
	// points into that copy: keep nothing of it, or every object retains
	// a second copy of its whole metadata (46 MB at 100,000 ConfigMaps).
	// One pass over metadata's members (each key's first occurrence, as
	// gjson's Get finds it): deriving is most of a restore's time.
	var uid, name, namespace, labels bool
	meta.ForEach(func(k, v gjson.Result) bool {
		switch {
		case k.Str == "uid" && !uid:
			uid = true
			obj.UID = rawString(obj.Raw, v)
		case k.Str == "name" && !name:
			// The key's name and namespace are in the stored bytes too:
			// share them (the decoded record's copies are garbage then).
			name = true
			obj.Key.Name = sharedString(obj.Raw, v, obj.Key.Name)
		case k.Str == "namespace" && !namespace:
			namespace = true
			if obj.Key.Namespace != "" {
				obj.Key.Namespace = sharedString(obj.Raw, v, obj.Key.Namespace)
			}
		case k.Str == "labels" && !labels:
			labels = true
			if v.IsObject() {
				v.ForEach(func(k, v gjson.Result) bool {
					lb.Add(k.String(), v.String())
					return true
				})
				obj.Labels = lb.Labels()
			}
		}
		return true
	})
	obj.BodyStart = int32(bodyStart(obj.Raw))
}

// sharedString returns cur as a string over raw's bytes when v, found in
// raw, is cur written without escapes; else cur.
func sharedString(raw []byte, v gjson.Result, cur string) string {
	start, end := v.Index+1, v.Index+len(v.Raw)-1
	if v.Type != gjson.String || v.Index <= 0 || end <= start || end > len(raw) || string(raw[start:end]) != cur {
		return cur
	}
	return unsafe.String(&raw[start], end-start)
}

// rawString returns the string value v, found in raw (gjson's Index is
// the offset in raw also for a value of a nested Result), as a string
// sharing raw's bytes when it is written without escapes (a uid always
// is; stored bytes are never modified), else a copy.
func rawString(raw []byte, v gjson.Result) string {
	start, end := v.Index+1, v.Index+len(v.Raw)-1
	if v.Type != gjson.String || v.Index <= 0 || end <= start || end > len(raw) || string(raw[start:end]) != v.Str {
		return strings.Clone(v.String())
	}
	return unsafe.String(&raw[start], end-start)
}

// bodyStart returns the offset just past `{"kind":"…","apiVersion":"…",`
// when raw starts that way (as admission writes every object), else 0.
func bodyStart(raw []byte) int {
	const k, a = `{"kind":"`, `","apiVersion":"`
	if len(raw) < len(k) || string(raw[:len(k)]) != k {
		return 0
	}
	i := len(k)
	for i < len(raw) && raw[i] != '"' {
		i++
	}
	if len(raw)-i < len(a) || string(raw[i:i+len(a)]) != a {
		return 0
	}
	i += len(a)
	for i < len(raw) && raw[i] != '"' {
		i++
	}
	if i+1 < len(raw) && raw[i+1] == ',' {
		return i + 2
	}
	return 0
}
