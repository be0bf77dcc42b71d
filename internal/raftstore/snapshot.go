package raftstore

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/btree"
	"github.com/hashicorp/raft"

	"github.com/litek8s/litek8s/internal/kv"
)

// A snapshot stream is:
//
//	magic "litek8s-snapshot-1\n", uvarint(applied index),
//	then per object uvarint(len)+record (a create record whose object is the
//	stored bytes, resourceVersion included) and uvarint(RV),
//	then uvarint(0).
const snapshotMagic = "litek8s-snapshot-1\n"

// fsmSnapshot is an immutable view of the store taken at one index.
type fsmSnapshot struct {
	applied uint64
	trees   []*btree.BTreeG[*kv.Object]
	m       *metrics
	// tr writes objects in their stored form (nil: as they are).
	tr Transformer
}

// Snapshot captures copy-on-write clones of every table and returns at once.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &fsmSnapshot{applied: f.applied, m: f.m, tr: f.tr}
	for name := range f.objs.tables {
		if v := f.objs.viewOf(name); v != nil {
			s.trees = append(s.trees, v.tree)
		}
	}
	return s, nil
}

// Persist streams the snapshot to sink.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	start := time.Now()
	if err := s.write(sink); err != nil {
		_ = sink.Cancel()
		s.m.snapshotFailures.Inc()
		return fmt.Errorf("raftstore: persist snapshot: %w", err)
	}
	if err := sink.Close(); err != nil {
		s.m.snapshotFailures.Inc()
		return err
	}
	s.m.snapshot.Observe(time.Since(start).Seconds())
	return nil
}

func (s *fsmSnapshot) write(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString(snapshotMagic)
	var buf, rec []byte // reused: a snapshot allocates nothing per object
	buf = binary.AppendUvarint(buf[:0], s.applied)
	bw.Write(buf)
	var err error
	for _, t := range s.trees {
		t.Ascend(func(obj *kv.Object) bool {
			raw := obj.Raw
			if s.tr != nil {
				if raw, err = toStorage(s.tr, obj.Key, obj.Raw); err != nil {
					return false
				}
			}
			rec = appendRecord(rec[:0], &kv.Write{Op: kv.OpCreate, Key: obj.Key, Object: raw})
			buf = binary.AppendUvarint(buf[:0], uint64(len(rec)))
			bw.Write(buf)
			bw.Write(rec)
			buf = binary.AppendUvarint(buf[:0], obj.RV)
			_, err = bw.Write(buf)
			return err == nil
		})
		if err != nil {
			return err
		}
	}
	bw.Write([]byte{0})
	return bw.Flush()
}

// Release does nothing: the clones are garbage collected.
func (s *fsmSnapshot) Release() {}

// Restore replaces the whole store with the snapshot in rc, then ends every
// watch, which can no longer be continued.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	start := time.Now()
	objs, applied, err := f.readSnapshot(bufio.NewReaderSize(rc, 1<<16))
	if err != nil {
		return fmt.Errorf("raftstore: restore snapshot: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.m.expiredRestore.Add(float64(f.feed.endAll(kv.ErrExpired)))
	f.objs = objs
	f.feed = newFeed(f.feedSize, f.watchBuffer, applied, f.m)
	f.applied = applied
	close(f.changed)
	f.changed = make(chan struct{})
	f.m.restore.Observe(time.Since(start).Seconds())
	return nil
}

// readSnapshot reads a snapshot stream into new objects. Decoding a
// record and deriving its object (labels, fields, Table cells: ~8 µs for a
// ConfigMap) is most of a restore's time, so restoreWorkers goroutines do
// it on batches of records while this one reads the next ones and another
// inserts the derived objects in order (a restarted member serves once
// its snapshot is restored: 100,000 ConfigMaps took 1.0 s on one core).
func (f *fsm) readSnapshot(r *bufio.Reader) (*objects, uint64, error) {
	magic := make([]byte, len(snapshotMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != snapshotMagic {
		return nil, 0, errors.New("not a litek8s snapshot")
	}
	applied, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, 0, err
	}
	objs := newObjects()
	workers := restoreWorkers()
	work := make(chan *restoreBatch, workers)
	ordered := make(chan *restoreBatch, 4*workers)
	var failed atomic.Bool // a batch failed: the reader stops
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lb kv.LabelsBuilder
			for b := range work {
				b.derive(f, &lb)
				close(b.done)
			}
		}()
	}
	inserted := make(chan error, 1)
	go func() {
		var first error
		for b := range ordered {
			<-b.done
			if first == nil && b.err != nil {
				first = b.err
				failed.Store(true)
			}
			if first != nil {
				continue // drain: the reader stops at its next batch
			}
			for _, obj := range b.objs {
				obj.Key.Resource = objs.resourceName(obj.Key.Resource)
				objs.put(obj)
			}
		}
		inserted <- first
	}()
	readErr := func() error {
		defer func() { close(work); close(ordered) }()
		b := newRestoreBatch()
		for !failed.Load() {
			n, err := binary.ReadUvarint(r)
			if err != nil {
				return err
			}
			if n == 0 {
				break
			}
			rec := make([]byte, n)
			if _, err := io.ReadFull(r, rec); err != nil {
				return err
			}
			rv, err := binary.ReadUvarint(r)
			if err != nil {
				return err
			}
			b.recs = append(b.recs, restoreRecord{rec, rv})
			if len(b.recs) == restoreBatchSize {
				ordered <- b
				work <- b
				b = newRestoreBatch()
			}
		}
		if len(b.recs) > 0 {
			ordered <- b
			work <- b
		}
		return nil
	}()
	wg.Wait()
	if err := <-inserted; err != nil {
		return nil, 0, err
	}
	if readErr != nil {
		return nil, 0, readErr
	}
	objs.restoredAt = applied // deletes before the snapshot left no trace
	return objs, applied, nil
}

// restoreBatchSize is how many records a restore worker derives at once.
const restoreBatchSize = 256

// restoreWorkers is how many goroutines derive a snapshot's objects: one
// per CPU the process may use (the reader and the inserter wait on I/O
// and channels most of the time; GOMAXPROCS-1 workers restored 10,000
// ConfigMaps in 31 ms, GOMAXPROCS in 21).
func restoreWorkers() int { return runtime.GOMAXPROCS(0) }

type restoreRecord struct {
	rec []byte
	rv  uint64
}

// restoreBatch is records of a snapshot and, once done is closed, their
// objects (or the first error).
type restoreBatch struct {
	recs []restoreRecord
	objs []*kv.Object
	err  error
	done chan struct{}
}

func newRestoreBatch() *restoreBatch {
	return &restoreBatch{recs: make([]restoreRecord, 0, restoreBatchSize), done: make(chan struct{})}
}

// derive decodes b's records and derives their objects (resource names
// are interned by the inserter).
func (b *restoreBatch) derive(f *fsm, lb *kv.LabelsBuilder) {
	b.objs = make([]*kv.Object, 0, len(b.recs))
	for _, r := range b.recs {
		w, err := decodeRecord(r.rec)
		if err != nil {
			b.err = err
			return
		}
		plain, stale, err := fromStorage(f.tr, w.Key, w.Object)
		if err != nil {
			b.err = err
			return
		}
		obj := f.deriveObject(w.Key, plain, r.rv, lb)
		obj.Stale = stale
		b.objs = append(b.objs, obj)
	}
	b.recs = nil
}
