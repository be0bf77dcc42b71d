package raftstore

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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
	// released, if set, is called by Release.
	released func()
}

// Snapshot captures copy-on-write clones of every table and returns at once.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &fsmSnapshot{applied: f.applied, m: f.m, tr: f.tr, released: f.onSnapshotReleased}
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

// Release tells the store (the clones are garbage collected). Raft calls
// it once the snapshot is persisted and the log compacted.
func (s *fsmSnapshot) Release() {
	if s.released != nil {
		s.released()
	}
}

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
	for {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, 0, err
		}
		if n == 0 {
			objs.restoredAt = applied // deletes before the snapshot left no trace
			return objs, applied, nil
		}
		rec := make([]byte, n)
		if _, err := io.ReadFull(r, rec); err != nil {
			return nil, 0, err
		}
		rv, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, 0, err
		}
		w, err := decodeRecord(rec)
		if err != nil {
			return nil, 0, err
		}
		plain, stale, err := fromStorage(f.tr, w.Key, w.Object)
		if err != nil {
			return nil, 0, err
		}
		w.Key.Resource = objs.resourceName(w.Key.Resource)
		obj := f.newObject(w.Key, plain, rv)
		obj.Stale = stale
		objs.put(obj)
	}
}
