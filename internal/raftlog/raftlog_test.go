package raftlog

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/types"
	"go.etcd.io/bbolt"
)

func entry(i uint64, size int) *raft.Log {
	data := bytes.Repeat([]byte{byte(i)}, size)
	copy(data, fmt.Sprintf("entry %d:", i))
	return &raft.Log{Index: i, Term: 1 + i/50, Type: raft.LogCommand, Data: data}
}

// checkEntries fails unless l holds exactly entries first..last as entry
// made them.
func checkEntries(t *testing.T, l raft.LogStore, first, last uint64, size int) {
	t.Helper()
	gotFirst, err1 := l.FirstIndex()
	gotLast, err2 := l.LastIndex()
	if err1 != nil || err2 != nil || gotFirst != first || gotLast != last {
		t.Fatalf("log holds %d..%d (%v, %v), want %d..%d", gotFirst, gotLast, err1, err2, first, last)
	}
	for i := first; i <= last; i++ {
		var got raft.Log
		if err := l.GetLog(i, &got); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		want := entry(i, size)
		if got.Index != i || got.Term != want.Term || got.Type != want.Type || !bytes.Equal(got.Data, want.Data) {
			t.Fatalf("entry %d reads back as index %d term %d type %v data %.20q", i, got.Index, got.Term, got.Type, got.Data)
		}
	}
}

func store(t *testing.T, l raft.LogStore, from, to uint64, size int) {
	t.Helper()
	for i := from; i <= to; i++ {
		if err := l.StoreLogs([]*raft.Log{entry(i, size)}); err != nil {
			t.Fatalf("store %d: %v", i, err)
		}
	}
}

// The log keeps what it was given across a close: entries, both ends
// truncated as Raft does (compaction from the head, a conflicting suffix
// from the tail), and the stable keys.
func TestStoreReopen(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, Options{SegmentSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	store(t, l, 1, 300, 900) // several segments of 64 KiB
	if err := l.DeleteRange(1, 120); err != nil {
		t.Fatal(err)
	}
	for _, i := range []uint64{1, 60, 120} { // deleted, though their segment may remain
		if err := l.GetLog(i, new(raft.Log)); !errors.Is(err, raft.ErrLogNotFound) {
			t.Errorf("GetLog(%d) after deleting 1..120: %v, want ErrLogNotFound", i, err)
		}
	}
	if err := l.DeleteRange(281, 300); err != nil {
		t.Fatal(err)
	}
	store(t, l, 281, 290, 900)
	if err := l.DeleteRange(121, 200); err != nil { // within the tail segment too
		t.Fatal(err)
	}
	if err := l.GetLog(200, new(raft.Log)); !errors.Is(err, raft.ErrLogNotFound) {
		t.Errorf("GetLog(200) after deleting 121..200: %v, want ErrLogNotFound", err)
	}
	if err := l.SetUint64([]byte("CurrentTerm"), 9); err != nil {
		t.Fatal(err)
	}
	if err := l.Set([]byte("LastVoteCand"), []byte("m2")); err != nil {
		t.Fatal(err)
	}
	if n, err := l.Bytes(); err != nil || n < 2*(64<<10) {
		t.Errorf("Bytes = %d, %v; want at least two 64 KiB segments", n, err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = Open(dir, Options{SegmentSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	checkEntries(t, l, 201, 290, 900)
	if v, err := l.GetUint64([]byte("CurrentTerm")); v != 9 || err != nil {
		t.Errorf("CurrentTerm = %d, %v", v, err)
	}
	if v, err := l.Get([]byte("LastVoteCand")); string(v) != "m2" || err != nil {
		t.Errorf("LastVoteCand = %q, %v", v, err)
	}
	if v, err := l.GetUint64([]byte("LastVoteTerm")); v != 0 || err != nil { // never set: 0, as Raft expects
		t.Errorf("LastVoteTerm = %d, %v", v, err)
	}
}

func writeBolt(t *testing.T, path string, first, last uint64, stable map[string]uint64, cand string) {
	t.Helper()
	b, err := raftboltdb.New(raftboltdb.Options{Path: path, // as earlier versions opened it
		BoltOptions: &bbolt.Options{NoFreelistSync: true, FreelistType: bbolt.FreelistMapType}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if last > 0 {
		store(t, b, 1, last, 700)
		if first > 1 {
			if err := b.DeleteRange(1, first-1); err != nil {
				t.Fatal(err)
			}
		}
	}
	for k, v := range stable {
		if err := b.SetUint64([]byte(k), v); err != nil {
			t.Fatal(err)
		}
	}
	if cand != "" {
		if err := b.Set([]byte("LastVoteCand"), []byte(cand)); err != nil {
			t.Fatal(err)
		}
	}
}

// A data dir an earlier version wrote (raft.db) opens with the same
// entries and stable keys, and raft.db is gone.
func TestMigrateFromBolt(t *testing.T) {
	for _, tc := range []struct {
		name        string
		first, last uint64
		stable      map[string]uint64
		cand        string
	}{
		{"compacted log and a vote", 40, 250, map[string]uint64{"CurrentTerm": 6, "LastVoteTerm": 6}, "m1"},
		{"restored: a term only", 0, 0, map[string]uint64{"CurrentTerm": 1}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			boltPath := filepath.Join(dir, BoltFile)
			writeBolt(t, boltPath, tc.first, tc.last, tc.stable, tc.cand)
			if !Exists(dir) {
				t.Fatal("Exists: false for a data dir with raft.db")
			}
			l, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if _, err := os.Stat(boltPath); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("raft.db after the copy: %v", err)
			}
			if _, err := os.Stat(filepath.Join(dir, Dir+".new")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("wal.new after the copy: %v", err)
			}
			if tc.last > 0 {
				checkEntries(t, l, tc.first, tc.last, 700)
			} else if last, err := l.LastIndex(); last != 0 || err != nil {
				t.Errorf("LastIndex = %d, %v; want an empty log", last, err)
			}
			for _, k := range []string{"CurrentTerm", "LastVoteTerm"} {
				if v, err := l.GetUint64([]byte(k)); v != tc.stable[k] || err != nil {
					t.Errorf("%s = %d, %v; want %d", k, v, err, tc.stable[k])
				}
			}
			if v, err := l.Get([]byte("LastVoteCand")); string(v) != tc.cand || err != nil {
				t.Errorf("LastVoteCand = %q, %v; want %q", v, err, tc.cand)
			}
			if tc.last > 0 { // and it goes on from there
				store(t, l, tc.last+1, tc.last+5, 700)
			}
		})
	}
}

// A copy cut short (wal.new left behind) starts over; a copy that
// completed but left raft.db (a crash before its removal) keeps the copy.
func TestMigrateAfterCrash(t *testing.T) {
	dir := t.TempDir()
	writeBolt(t, filepath.Join(dir, BoltFile), 1, 60, map[string]uint64{"CurrentTerm": 3}, "")
	if err := os.MkdirAll(filepath.Join(dir, Dir+".new"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, Dir+".new", "junk"), []byte("half a copy"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkEntries(t, l, 1, 60, 700)
	store(t, l, 61, 70, 700)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// raft.db back (as if its removal had not reached the disk): the WAL,
	// which has more, wins and raft.db goes.
	writeBolt(t, filepath.Join(dir, BoltFile), 1, 30, map[string]uint64{"CurrentTerm": 2}, "")
	l, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	checkEntries(t, l, 1, 70, 700)
	if v, _ := l.GetUint64([]byte("CurrentTerm")); v != 3 {
		t.Errorf("CurrentTerm = %d, want 3 (the copy's)", v)
	}
	if _, err := os.Stat(filepath.Join(dir, BoltFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("raft.db: %v", err)
	}
}

// A second Open of a data dir another holds fails after the lock timeout,
// saying the dir is in use; once the first closes, it opens.
func TestOpenInUse(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	second, err := Open(dir, Options{LockTimeout: 200 * time.Millisecond})
	if err == nil {
		second.Close()
		l.Close()
		t.Fatal("a second Open of the same data dir succeeded")
	}
	if want := "data dir " + dir + " is in use by another process"; !strings.Contains(err.Error(), want) {
		t.Errorf("second Open: %v; want %q", err, want)
	}
	if took := time.Since(start); took < 200*time.Millisecond || took > 2*time.Second {
		t.Errorf("second Open gave up after %s, want ~200ms", took)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = Open(dir, Options{LockTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open after the first closed: %v", err)
	}
	l.Close()
}

// mountTmpfs mounts a tmpfs of size bytes on a new directory and unmounts
// it at cleanup. Without root (or mount) the test is skipped, except in
// CI, where it fails.
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		msg := fmt.Sprintf("mount a tmpfs (needs root): %v: %s", err, out)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fill writes path until its file system has no room left.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
	}
}

// When the disk is full as a segment fills, appends fail (the one that
// would seal the segment writes past its preallocated size; raft-wal rolls
// it back) while the disk stays full, and succeed once there is room
// again, past the next rotation too, losing nothing.
func TestAppendAfterDiskFull(t *testing.T) {
	dir := mountTmpfs(t, 4<<20)
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	const seg = 256 << 10
	l, err := Open(data, Options{SegmentSize: seg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() }) // before the unmount (cleanups run last first)
	filler := filepath.Join(dir, "filler")
	fill(t, filler)
	// The first segment was preallocated: appends go on until it is full
	// and the next cannot be created.
	var i uint64
	var failed error
	for i = 1; i < 10*seg/1000; i++ {
		if failed = l.StoreLogs([]*raft.Log{entry(i, 1000)}); failed != nil {
			break
		}
	}
	if failed == nil {
		t.Fatalf("%d appends of 1,000 bytes into a full file system all succeeded", i)
	}
	t.Logf("append %d, the disk full: %v", i, failed)
	if err := l.StoreLogs([]*raft.Log{entry(i, 1000)}); err == nil {
		t.Fatal("an append succeeded while the disk was still full")
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	store(t, l, i, i+300, 1000) // past the next rotation too
	checkEntries(t, l, 1, i+300, 1000)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = Open(data, Options{SegmentSize: seg})
	if err != nil {
		t.Fatal(err)
	}
	checkEntries(t, l, 1, i+300, 1000)
}

// failOnce is a WAL metadata store whose next CommitState fails once
// armed.
type failOnce struct {
	types.MetaStore
	armed *atomic.Bool
}

func (m failOnce) CommitState(s types.PersistentState) error {
	if m.armed.CompareAndSwap(true, false) {
		return errors.New("injected: metadata not written")
	}
	return m.MetaStore.CommitState(s)
}

// A tail segment sealed on disk whose metadata still says unsealed (the
// process stopped between the two, or the metadata write failed) refuses
// every append, even after the WAL is opened again: the log starts a new
// segment at its last entry and goes on, losing nothing.
func TestAppendAfterSealNotRecorded(t *testing.T) {
	dir := t.TempDir()
	var armed atomic.Bool
	var logs bytes.Buffer
	opts := Options{SegmentSize: 64 << 10,
		Events:  slog.New(slog.NewTextHandler(&logs, nil)),
		newMeta: func() types.MetaStore { return failOnce{&metadb.BoltMetaDB{}, &armed} }}
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { l.Close() }()
	store(t, l, 1, 30, 900)
	armed.Store(true) // the first segment's rotation fails to record itself
	store(t, l, 31, 200, 900)
	if armed.Load() {
		t.Fatal("no rotation in 200 entries of 900 bytes into 64 KiB segments")
	}
	if !strings.Contains(logs.String(), "sealed on disk but not in its metadata") {
		t.Errorf("the tail was not restarted; log:\n%s", logs.String())
	}
	checkEntries(t, l, 1, 200, 900)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if l, err = Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	checkEntries(t, l, 1, 200, 900)
	store(t, l, 201, 300, 900)
	checkEntries(t, l, 1, 300, 900)
}

// openBench opens a log store in a temp dir: "wal" this package's,
// "boltdb" raft-boltdb with the options earlier versions used.
func openBench(b *testing.B, name string) raft.LogStore {
	dir := b.TempDir()
	if name == "wal" {
		l, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { l.Close() })
		return l
	}
	bs, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, BoltFile),
		BoltOptions: &bbolt.Options{NoFreelistSync: true, FreelistType: bbolt.FreelistMapType}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { bs.Close() })
	return bs
}

// BenchmarkStoreLogs appends one entry of 900 bytes at a time (a lone
// write: what a watch waits for), into this package's log and into
// raft-boltdb with the options earlier versions used, side by side.
func BenchmarkStoreLogs(b *testing.B) {
	for _, name := range []string{"wal", "boltdb"} {
		b.Run(name, func(b *testing.B) {
			s := openBench(b, name)
			data := bytes.Repeat([]byte("x"), 900)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				l := &raft.Log{Index: uint64(i) + 1, Term: 1, Type: raft.LogCommand, Data: data}
				if err := s.StoreLogs([]*raft.Log{l}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGetLog reads back, in order, 10,000 entries of 900 bytes (what
// a restart replays after its snapshot, or a leader sends a follower that
// fell behind its log cache), from this package's log and from
// raft-boltdb, side by side.
func BenchmarkGetLog(b *testing.B) {
	const n = 10000
	for _, name := range []string{"wal", "boltdb"} {
		b.Run(name, func(b *testing.B) {
			s := openBench(b, name)
			data := bytes.Repeat([]byte("x"), 900)
			batch := make([]*raft.Log, 0, 256)
			for i := uint64(1); i <= n; i++ {
				batch = append(batch, &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: data})
				if len(batch) == cap(batch) || i == n {
					if err := s.StoreLogs(batch); err != nil {
						b.Fatal(err)
					}
					batch = batch[:0]
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			var l raft.Log
			for i := range b.N {
				if err := s.GetLog(uint64(i%n)+1, &l); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
