// Package raftlog is a member's Raft log and stable store: hashicorp/raft-wal's
// segment files under <data dir>/wal. An append is one write and one fsync
// into a preallocated segment; bbolt (raft-boltdb, which earlier versions
// used) needed two fdatasyncs a commit, and every write waits for two
// appends in a row (the leader's, then a follower's).
//
// A data dir an earlier version wrote (raft.db) is copied into wal/ when
// opened, once; raft.db is removed after the copy is complete on disk.
package raftlog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/metrics"
	"github.com/hashicorp/raft-wal/migrate"
	"github.com/hashicorp/raft-wal/types"
	"go.etcd.io/bbolt"
)

// Dir is the log's directory in a data dir; BoltFile is the file earlier
// versions kept the log in.
const (
	Dir      = "wal"
	BoltFile = "raft.db"
)

// DefaultLockTimeout is how long Open waits, by default, for another
// process to let go of the data dir: long enough for one that is closing
// it, short enough to tell an operator soon that another one holds it.
const DefaultLockTimeout = 2 * time.Second

// Options tune Open. The zero value is usable.
type Options struct {
	// Logger gets raft-wal's messages; nil: none.
	Logger hclog.Logger
	// Events gets this package's own: the copy of an earlier version's
	// raft.db, the recovery of a sealed tail segment; nil: none.
	Events *slog.Logger
	// LockTimeout is how long Open waits for another process to let go of
	// the data dir (0: DefaultLockTimeout).
	LockTimeout time.Duration
	// SegmentSize is the size of each segment file (0: raft-wal's 64 MiB).
	SegmentSize int
	// Metrics receives raft-wal's counters (nil: none).
	Metrics metrics.Collector

	// newMeta, if set, makes the WAL's metadata store (tests).
	newMeta func() types.MetaStore
}

// Log is the Raft log and stable store of one data dir. It implements
// raft.LogStore and raft.StableStore.
type Log struct {
	dir  string // the data dir
	opts Options
	lock *os.File // the data dir, flocked

	// mu guards w, reopen and closed: recoverSealed replaces w; every
	// other call reads it under RLock. After Close, w stays (closed: its
	// calls fail with raft-wal's ErrClosed).
	mu sync.RWMutex
	w  *wal.WAL
	// reopen is set while w is closed, its reopen having failed: the next
	// append opens the WAL again.
	reopen bool
	closed bool
}

var (
	_ raft.LogStore          = (*Log)(nil)
	_ raft.StableStore       = (*Log)(nil)
	_ raft.MonotonicLogStore = (*Log)(nil)
)

// Exists reports whether dataDir holds a Raft log (this version's or an
// earlier one's).
func Exists(dataDir string) bool {
	for _, name := range []string{Dir, BoltFile} {
		if _, err := os.Stat(filepath.Join(dataDir, name)); err == nil {
			return true
		}
	}
	return false
}

// Open opens the log in dataDir (which must exist), creating it, or copying
// raft.db into it, as needed. A data dir another process holds is refused
// after opts.LockTimeout.
func Open(dataDir string, opts Options) (*Log, error) {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Events == nil {
		opts.Events = slog.New(slog.DiscardHandler)
	}
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = DefaultLockTimeout
	}
	if opts.Metrics == nil {
		opts.Metrics = &metrics.NoOpCollector{}
	}
	lock, err := lockDir(dataDir, opts.LockTimeout)
	if err != nil {
		return nil, err
	}
	l := &Log{dir: dataDir, opts: opts, lock: lock}
	if err := l.migrate(); err != nil {
		lock.Close()
		return nil, err
	}
	if l.w, err = l.openWAL(); err != nil {
		lock.Close()
		return nil, err
	}
	return l, nil
}

// lockDir takes an exclusive flock on the data dir itself (released by
// the kernel if the process dies), retrying until timeout.
func lockDir(dir string, timeout time.Duration) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("raftlog: data dir: %w", err)
	}
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("raftlog: lock data dir %s: %w", dir, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("data dir %s is in use by another process (its Raft log stayed locked for %s)", dir, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (l *Log) openWAL() (*wal.WAL, error) {
	path := filepath.Join(l.dir, Dir)
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, fmt.Errorf("raftlog: %w", err)
	}
	return l.openWALAt(path)
}

func (l *Log) openWALAt(path string) (*wal.WAL, error) {
	size := l.opts.SegmentSize
	if size <= 0 {
		size = wal.DefaultSegmentSize
	}
	var meta types.MetaStore = &metadb.BoltMetaDB{}
	if l.opts.newMeta != nil {
		meta = l.opts.newMeta()
	}
	w, err := wal.Open(path, wal.WithLogger(l.opts.Logger), wal.WithMetricsCollector(l.opts.Metrics),
		wal.WithSegmentSize(size), wal.WithMetaStore(meta))
	if err != nil {
		meta.Close()
		return nil, fmt.Errorf("raftlog: open %s: %w", path, err)
	}
	return w, nil
}

// migrate copies an earlier version's raft.db into wal/: into wal.new
// first, renamed to wal once complete and synced; raft.db is removed
// last. A crash at any point leaves either raft.db alone (the copy starts
// over) or wal (raft.db, if still there, is removed).
func (l *Log) migrate() error {
	boltPath := filepath.Join(l.dir, BoltFile)
	if _, err := os.Stat(boltPath); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	walPath := filepath.Join(l.dir, Dir)
	if _, err := os.Stat(walPath); err == nil { // copied; raft.db left by a crash
		return removeSynced(boltPath)
	}
	start := time.Now()
	tmp := filepath.Join(l.dir, Dir+".new")
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("raftlog: migrate: %w", err)
	}
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return fmt.Errorf("raftlog: migrate: %w", err)
	}
	n, err := l.copyBolt(boltPath, tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("raftlog: copy %s into %s: %w", boltPath, walPath, err)
	}
	if err := os.Rename(tmp, walPath); err != nil {
		return fmt.Errorf("raftlog: migrate: %w", err)
	}
	if err := syncDir(l.dir); err != nil { // the rename on disk before raft.db goes
		return err
	}
	if err := removeSynced(boltPath); err != nil {
		return err
	}
	l.opts.Events.Info("copied the Raft log of an earlier version into "+walPath, "from", boltPath,
		"entries", n, "seconds", time.Since(start).Seconds())
	return nil
}

// copyBolt copies raft.db's log entries and Raft's stable keys into a new
// WAL in dir and returns how many entries it copied.
func (l *Log) copyBolt(boltPath, dir string) (uint64, error) {
	src, err := raftboltdb.New(raftboltdb.Options{Path: boltPath,
		BoltOptions: &bbolt.Options{Timeout: l.opts.LockTimeout, ReadOnly: true}})
	if err != nil {
		return 0, err
	}
	defer src.Close()
	dst, err := l.openWALAt(dir)
	if err != nil {
		return 0, err
	}
	defer dst.Close()
	first, err := src.FirstIndex()
	if err != nil {
		return 0, err
	}
	last, err := src.LastIndex()
	if err != nil {
		return 0, err
	}
	ctx := context.Background()
	if last > 0 {
		if err := migrate.CopyLogs(ctx, dst, src, 1<<20, nil); err != nil {
			return 0, err
		}
	}
	if err := copyStable(dst, src); err != nil {
		return 0, err
	}
	if last == 0 {
		return 0, nil
	}
	return last - first + 1, nil
}

// copyStable copies the keys hashicorp/raft keeps in its stable store
// (migrate.CopyStable fails on a key never set: raft.db after a restore
// holds only CurrentTerm).
func copyStable(dst, src raft.StableStore) error {
	for _, k := range []string{"CurrentTerm", "LastVoteTerm"} {
		v, err := src.GetUint64([]byte(k))
		if errors.Is(err, raftboltdb.ErrKeyNotFound) {
			continue
		}
		if err == nil {
			err = dst.SetUint64([]byte(k), v)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	v, err := src.Get([]byte("LastVoteCand"))
	if errors.Is(err, raftboltdb.ErrKeyNotFound) {
		return nil
	}
	if err == nil {
		err = dst.Set([]byte("LastVoteCand"), v)
	}
	if err != nil {
		return fmt.Errorf("LastVoteCand: %w", err)
	}
	return nil
}

// removeSynced removes path and syncs its directory.
func removeSynced(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("raftlog: %w", err)
	}
	return syncDir(filepath.Dir(path))
}

// syncDir makes the entries of dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("raftlog: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("raftlog: sync %s: %w", dir, err)
	}
	return nil
}

// FirstIndex implements raft.LogStore.
func (l *Log) FirstIndex() (uint64, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.w.FirstIndex()
}

// LastIndex implements raft.LogStore.
func (l *Log) LastIndex() (uint64, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.w.LastIndex()
}

// GetLog implements raft.LogStore. An entry below the first index is not
// found: raft-wal's tail segment still answers for entries deleted from
// the head until the whole segment goes, and Raft must see them gone (a
// follower that needs them gets a snapshot).
func (l *Log) GetLog(index uint64, log *raft.Log) error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if first, err := l.w.FirstIndex(); err == nil && index < first {
		return raft.ErrLogNotFound
	}
	return l.w.GetLog(index, log)
}

// StoreLog implements raft.LogStore.
func (l *Log) StoreLog(log *raft.Log) error { return l.StoreLogs([]*raft.Log{log}) }

// StoreLogs implements raft.LogStore. raft-wal refuses every append to a
// sealed tail segment (types.ErrSealed); the tail stays sealed when the
// next segment could not be made (the disk full as a segment filled) or,
// after a restart, when the process stopped between sealing a segment and
// recording that in the WAL's metadata. See recoverSealed.
func (l *Log) StoreLogs(logs []*raft.Log) error {
	l.mu.RLock()
	w, reopen := l.w, l.reopen && !l.closed
	err := w.StoreLogs(logs)
	l.mu.RUnlock()
	if errors.Is(err, types.ErrSealed) || reopen {
		return l.recoverSealed(w, logs)
	}
	return err
}

// recoverSealed gets a WAL whose tail segment is sealed appending again,
// then appends logs. First it opens the WAL again, which creates a next
// segment recorded but not made. If the tail is still sealed (sealed on
// disk, not in the metadata), it has raft-wal start a new segment the one
// way it can from outside: the last entry is read, deleted (a tail
// truncation seals the tail where it is and starts the next segment there)
// and appended again into the new segment. A crash between the two would
// lose that one entry from this member's log (the window is one metadata
// commit and one append, and only after a crash that left the tail that
// way: raft-wal seals a segment once per 64 MiB).
func (l *Log) recoverSealed(old *wal.WAL, logs []*raft.Log) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return types.ErrClosed
	}
	if l.w == old {
		if !l.reopen {
			l.opts.Events.Warn("the log's tail segment is sealed (its next segment could not be made: disk full?): opening the log again")
			old.Close()
			l.reopen = true
		}
		w, err := l.openWAL()
		if err != nil {
			// Keep the closed WAL (its calls fail with ErrClosed) until
			// an append opens it.
			return err
		}
		l.w, l.reopen = w, false
	}
	err := l.w.StoreLogs(logs)
	if !errors.Is(err, types.ErrSealed) {
		return err
	}
	last, err := l.w.LastIndex()
	if err != nil {
		return err
	}
	var e raft.Log
	if err := l.w.GetLog(last, &e); err != nil {
		return fmt.Errorf("raftlog: read entry %d to restart the sealed tail: %w", last, err)
	}
	l.opts.Events.Warn("the log's tail segment is sealed on disk but not in its metadata: starting a new segment at its last entry",
		"index", last)
	if err := l.w.DeleteRange(last, last); err != nil {
		return fmt.Errorf("raftlog: restart the sealed tail: %w", err)
	}
	if err := l.w.StoreLogs([]*raft.Log{&e}); err != nil {
		return fmt.Errorf("raftlog: append entry %d again after restarting the sealed tail: %w", last, err)
	}
	return l.w.StoreLogs(logs)
}

// IsMonotonic implements raft.MonotonicLogStore: the log holds consecutive
// indexes only, so Raft, after installing a snapshot, empties it instead of
// compacting it (an append after the snapshot's index would not follow the
// entries left).
func (l *Log) IsMonotonic() bool { return true }

// DeleteRange implements raft.LogStore.
func (l *Log) DeleteRange(min, max uint64) error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.w.DeleteRange(min, max)
}

// Set implements raft.StableStore.
func (l *Log) Set(key, val []byte) error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.w.Set(key, val)
}

// Get implements raft.StableStore.
func (l *Log) Get(key []byte) ([]byte, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.w.Get(key)
}

// SetUint64 implements raft.StableStore.
func (l *Log) SetUint64(key []byte, val uint64) error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.w.SetUint64(key, val)
}

// GetUint64 implements raft.StableStore.
func (l *Log) GetUint64(key []byte) (uint64, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.w.GetUint64(key)
}

// Bytes returns the size of the log's files on disk (segments are
// preallocated: a new one counts in full).
func (l *Log) Bytes() (int64, error) {
	ents, err := os.ReadDir(filepath.Join(l.dir, Dir))
	if err != nil {
		return 0, err
	}
	var n int64
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n, nil
}

// Close closes the log and lets go of the data dir.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	err := l.w.Close()
	l.lock.Close()
	return err
}
