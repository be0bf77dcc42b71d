package raftstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/litek8s/litek8s/internal/kv"
)

// ackLog records every acknowledged write with the object Propose
// returned, from which the store's state at any revision follows.
type ackLog struct {
	mu   sync.Mutex
	acks []ack
}

type ack struct {
	op  kv.Op
	obj *kv.Object
}

func (a *ackLog) add(op kv.Op, obj *kv.Object) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.acks = append(a.acks, ack{op, obj})
}

// maxRV returns the revision of the last acknowledged write.
func (a *ackLog) maxRV() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	var rv uint64
	for _, x := range a.acks {
		rv = max(rv, x.obj.RV)
	}
	return rv
}

// stateAt replays the acknowledged writes up to revision rev.
func (a *ackLog) stateAt(rev uint64) map[kv.Key]dumpEntry {
	a.mu.Lock()
	acks := slices.Clone(a.acks)
	a.mu.Unlock()
	sort.Slice(acks, func(i, j int) bool { return acks[i].obj.RV < acks[j].obj.RV })
	out := make(map[kv.Key]dumpEntry)
	for _, x := range acks {
		switch {
		case x.obj.RV > rev:
		case x.op == kv.OpDelete:
			delete(out, x.obj.Key)
		default:
			out[x.obj.Key] = dumpEntry{Raw: string(x.obj.Raw), RV: x.obj.RV}
		}
	}
	return out
}

// withoutMembers drops the members resource from a dump.
func withoutMembers(d map[kv.Key]dumpEntry) map[kv.Key]dumpEntry {
	maps.DeleteFunc(d, func(k kv.Key, _ dumpEntry) bool { return k.Resource == membersResource })
	return d
}

func countResources(d map[kv.Key]dumpEntry) map[string]int {
	out := make(map[string]int)
	for k := range d {
		out[k.Resource]++
	}
	return out
}

func secretWrite(op kv.Op, ns, name string) kv.Write {
	w := kv.Write{Op: op, Key: kv.Key{Resource: "secrets", Namespace: ns, Name: name}}
	if op != kv.OpDelete {
		w.Object = fmt.Appendf(nil, `{"kind":"Secret","apiVersion":"v1","metadata":{"name":%q,"namespace":%q,"uid":"s-%s"},"data":{"k":"dg=="}}`, name, ns, name)
	}
	return w
}

func namespaceWrite(name string) kv.Write {
	return kv.Write{Op: kv.OpCreate, Key: kv.Key{Resource: "namespaces", Name: name},
		Object: fmt.Appendf(nil, `{"kind":"Namespace","apiVersion":"v1","metadata":{"name":%q,"uid":"n-%s"}}`, name, name)}
}

// fillMixed writes objects of three resources in several namespaces, some
// updated, some deleted, through s (the leader).
func fillMixed(t *testing.T, s *Store, acks *ackLog) {
	t.Helper()
	put := func(w kv.Write) {
		t.Helper()
		obj, err := s.Propose(t.Context(), w)
		if err != nil {
			t.Fatalf("propose %v %v: %v", w.Op, w.Key, err)
		}
		acks.add(w.Op, obj)
	}
	for i := range 12 {
		put(cmWrite(kv.OpCreate, "ns"+strconv.Itoa(i%3), "cm"+strconv.Itoa(i), 0))
	}
	put(cmWrite(kv.OpUpdate, "ns1", "cm1", 1))
	put(cmWrite(kv.OpUpdate, "ns1", "cm1", 2))
	put(cmWrite(kv.OpDelete, "ns2", "cm2", 0))
	for i := range 5 {
		put(secretWrite(kv.OpCreate, "ns"+strconv.Itoa(i%2), "s"+strconv.Itoa(i)))
	}
	put(secretWrite(kv.OpDelete, "ns0", "s2"))
	for i := range 3 {
		put(namespaceWrite("ns" + strconv.Itoa(i)))
	}
}

// loadWriter creates, updates and deletes ConfigMaps in namespace "load"
// until ctx ends, counting acknowledged writes in n.
func loadWriter(ctx context.Context, s *Store, acks *ackLog, n *atomic.Int64) error {
	put := func(w kv.Write) error {
		obj, err := s.Propose(context.Background(), w) // not ctx: its end must not make an outcome unknown
		if err != nil {
			return fmt.Errorf("propose %v %v: %w", w.Op, w.Key, err)
		}
		acks.add(w.Op, obj)
		n.Add(1)
		return nil
	}
	for i := 0; ctx.Err() == nil; i++ {
		if err := put(cmWrite(kv.OpCreate, "load", "load-"+strconv.Itoa(i), 0)); err != nil {
			return err
		}
		if i%3 == 2 {
			if err := put(cmWrite(kv.OpUpdate, "load", "load-"+strconv.Itoa(i-1), i)); err != nil {
				return err
			}
		}
		if i%4 == 3 {
			if err := put(cmWrite(kv.OpDelete, "load", "load-"+strconv.Itoa(i-2), 0)); err != nil {
				return err
			}
		}
	}
	return nil
}

// newBareCluster returns a cluster without members, set up like c; add
// them with add.
func (c *testCluster) newBareCluster(t *testing.T) *testCluster {
	c2 := &testCluster{t: t, token: c.token, client: c.client, tweak: c.tweak}
	t.Cleanup(c2.close)
	return c2
}

// add starts a member on dir (not bootstrapping) on a Raft port picked now.
func (c *testCluster) add(id, dir string) *testMember {
	c.t.Helper()
	m := &testMember{id: id, dir: dir, raftAddr: "127.0.0.1:0", apiAddr: "127.0.0.1:0"}
	c.members = append(c.members, m)
	c.start(m)
	return m
}

func TestBackupRestore(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	l := c.WaitLeader()
	leader := c.store(l)
	var acks ackLog
	fillMixed(t, leader, &acks)

	// Back up from a follower while the leader keeps writing.
	ctx, stop := context.WithCancel(t.Context())
	var writes atomic.Int64
	done := make(chan error, 1)
	go func() { done <- loadWriter(ctx, leader, &acks, &writes) }()
	waitWrites := func(n int64) {
		t.Helper()
		eventually(t, 20*time.Second, func() error {
			if got := writes.Load(); got < n {
				return fmt.Errorf("%d writes, want %d", got, n)
			}
			return nil
		})
	}
	waitWrites(20)
	acked := acks.maxRV()
	f := (l + 1) % 3
	var buf bytes.Buffer
	info, err := c.store(f).Backup(t.Context(), &buf)
	waitWrites(writes.Load() + 20)
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatalf("Backup: %v", err)
	}
	backup := buf.Bytes()
	t.Logf("backup at index %d (last acknowledged before it: %d, writes until %d): %d objects, %d bytes",
		info.Index, acked, acks.maxRV(), info.Objects, info.Size)

	want := acks.stateAt(info.Index)
	sum := sha256.Sum256(backup[:len(backup)-sha256.Size])
	switch {
	case info.Index < acked:
		t.Errorf("backup at index %d misses writes acknowledged before it (up to %d)", info.Index, acked)
	case info.Index >= acks.maxRV():
		t.Errorf("backup at index %d, after every write (%d): not taken during the writes", info.Index, acks.maxRV())
	case info.Objects != len(want) || !maps.Equal(info.Resources, countResources(want)):
		t.Errorf("backup counts %d objects %v, want %d %v", info.Objects, info.Resources, len(want), countResources(want))
	case info.Size != int64(len(backup)) || info.SHA256 != hex.EncodeToString(sum[:]):
		t.Errorf("backup info size %d sha %s; wrote %d bytes, sha %x", info.Size, info.SHA256, len(backup), sum)
	case info.Member != c.members[f].id || info.Term == 0 || time.Since(info.Created) > time.Minute:
		t.Errorf("backup info %+v", info)
	}

	// The member the backup came from agrees, where it still keeps the
	// state at the backup's index.
	for res := range info.Resources {
		list, err := c.store(f).ListAt(t.Context(), res, "", info.Index)
		if errors.Is(err, kv.ErrExpired) {
			t.Logf("%s at %d no longer kept on the original", res, info.Index)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		list.Range("", func(o *kv.Object) bool {
			if w, ok := want[o.Key]; !ok || w.Raw != string(o.Raw) || w.RV != o.RV {
				t.Errorf("original's ListAt(%s, %d) has %v at %d, the acknowledged writes %+v", res, info.Index, o.Key, o.RV, w)
			}
			n++
			return true
		})
		if n != info.Resources[res] {
			t.Errorf("original's ListAt(%s, %d) has %d objects, the backup %d", res, info.Index, n, info.Resources[res])
		}
	}

	inspected, err := InspectBackup(bytes.NewReader(backup))
	if err != nil {
		t.Fatalf("InspectBackup: %v", err)
	}
	if !reflect.DeepEqual(inspected, info) {
		t.Errorf("InspectBackup = %+v, Backup said %+v", inspected, info)
	}

	// Restore from a reader that cannot seek (spooled to TMPDIR).
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := filepath.Join(t.TempDir(), "restored")
	restored, err := RestoreBackup(struct{ io.Reader }{bytes.NewReader(backup)}, dir, "r0", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("RestoreBackup: %v", err)
	}
	if !reflect.DeepEqual(restored, info) {
		t.Errorf("RestoreBackup = %+v, Backup said %+v", restored, info)
	}
	noSpool(t, tmp)

	c2 := c.newBareCluster(t)
	m0 := c2.add("r0", dir)
	c2.WaitLeader()
	r := m0.store
	if got := r.Revision(); got < info.Index {
		t.Fatalf("restored member at revision %d, backup at %d", got, info.Index)
	}
	if d := diffDumps(want, withoutMembers(dumpFSM(r.fsm))); d != "" {
		t.Fatalf("restored store differs from the original at index %d: %s", info.Index, d)
	}
	if got := r.Stats()["last_snapshot_index"]; got != strconv.FormatUint(info.Index, 10) {
		t.Errorf("restored member's last snapshot index %s, want %d", got, info.Index)
	}
	if st := r.Status(); st.Term <= restoredTerm { // raft.db held the snapshot's term
		t.Errorf("restored member leads in term %d, want > %d", st.Term, restoredTerm)
	}
	// Its own address, written as 127.0.0.1:0, is fixed once it leads; its
	// member record is written anew.
	eventually(t, 10*time.Second, func() error {
		ms, err := r.Members()
		if err != nil {
			return err
		}
		if len(ms) != 1 || ms[0].ID != "r0" || ms[0].RaftAddr != r.RaftAddr() || ms[0].APIURL != m0.url {
			return fmt.Errorf("members %+v, want r0 at %s %s", ms, r.RaftAddr(), m0.url)
		}
		return nil
	})

	// Reads at the backup's index, consistent gets, watches from it.
	list, err := r.ListAt(t.Context(), "configmaps", "", info.Index)
	if err != nil {
		t.Fatalf("ListAt(backup index): %v", err)
	}
	n := 0
	list.Range("", func(o *kv.Object) bool {
		if w, ok := want[o.Key]; !ok || w.Raw != string(o.Raw) || w.RV != o.RV {
			t.Errorf("ListAt(backup index) has %v at %d, want %+v", o.Key, o.RV, w)
		}
		n++
		return true
	})
	if n != info.Resources["configmaps"] {
		t.Errorf("ListAt(backup index) has %d configmaps, want %d", n, info.Resources["configmaps"])
	}
	got, _, err := r.Get(t.Context(), cmKey("ns1", "cm1"), true)
	if w := want[cmKey("ns1", "cm1")]; err != nil || string(got.Raw) != w.Raw || got.RV != w.RV {
		t.Errorf("restored Get(ns1/cm1) = %v, %v; want %+v", got, err, w)
	}
	if _, err := r.Watch("configmaps", "", info.Index-1); !errors.Is(err, kv.ErrExpired) {
		t.Errorf("watch from before the backup = %v, want ErrExpired", err)
	}
	w, err := r.Watch("configmaps", "", info.Index)
	if err != nil {
		t.Fatalf("watch from the backup index: %v", err)
	}
	defer w.Stop()
	after := c2.propose(cmWrite(kv.OpCreate, "ns0", "after-restore", 0))
	if after.RV <= info.Index {
		t.Errorf("write after restore at RV %d, backup at %d", after.RV, info.Index)
	}
	if ev := recvEvent(t, w); ev.Type != kv.Added || ev.Object.RV != after.RV {
		t.Errorf("watch from the backup index got %v at %d, want the new object at %d", ev.Type, ev.Object.RV, after.RV)
	}

	// A second member joins the restored one and gets every object (from
	// the restored snapshot: the log starts after it).
	m1 := c2.add("r1", filepath.Join(t.TempDir(), "r1"))
	jctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := m1.store.Join(jctx, m0.url); err != nil {
		t.Fatalf("join the restored member: %v", err)
	}
	c2.checkConsistent()
	want[after.Key] = dumpEntry{Raw: string(after.Raw), RV: after.RV}
	if d := diffDumps(want, withoutMembers(dumpFSM(m1.store.fsm))); d != "" {
		t.Errorf("joined member differs: %s", d)
	}
	ms, err := m1.store.Members()
	if err != nil || len(ms) != 2 {
		t.Fatalf("members seen by the joiner: %+v, %v", ms, err)
	}
	for _, m := range ms {
		if id := m.ID; (id == "r0" && m.RaftAddr != m0.raftAddr) || (id == "r1" && m.RaftAddr != m1.raftAddr) {
			t.Errorf("joiner sees %+v, want r0 at %s, r1 at %s", m, m0.raftAddr, m1.raftAddr)
		}
	}
}

// stillEmpty fails when dir holds anything (or exists, when it did not).
func stillEmpty(t *testing.T, dir string, existed bool) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	switch {
	case !existed && !errors.Is(err, os.ErrNotExist):
		t.Errorf("%s created (%v)", dir, err)
	case existed && (err != nil || len(ents) != 0):
		t.Errorf("%s: %d entries, %v", dir, len(ents), err)
	}
}

func TestBackupRefused(t *testing.T) {
	c := newTestCluster(t, 1, nil)
	c.WaitLeader()
	var acks ackLog
	fillMixed(t, c.store(0), &acks)
	var buf bytes.Buffer
	if _, err := c.store(0).Backup(t.Context(), &buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.store(0).Backup(ctx, io.Discard); !errors.Is(err, context.Canceled) {
		t.Errorf("Backup with a cancelled context = %v", err)
	}

	// Every flipped bit and every truncation is refused.
	for i := range good {
		b := bytes.Clone(good)
		b[i] ^= 1 << (i % 8)
		if _, err := InspectBackup(bytes.NewReader(b)); !errors.Is(err, ErrBadBackup) {
			t.Fatalf("bit %d of byte %d flipped: InspectBackup = %v, want ErrBadBackup", i%8, i, err)
		}
		if _, err := InspectBackup(bytes.NewReader(good[:i])); !errors.Is(err, ErrBadBackup) {
			t.Fatalf("truncated to %d of %d bytes: InspectBackup = %v, want ErrBadBackup", i, len(good), err)
		}
	}

	// A reader that fails is not a bad backup.
	boom := errors.New("disk gone")
	if _, err := InspectBackup(io.MultiReader(bytes.NewReader(good[:100]), iotest.ErrReader(boom))); !errors.Is(err, boom) || errors.Is(err, ErrBadBackup) {
		t.Errorf("InspectBackup of a failing reader = %v, want %v and not ErrBadBackup", err, boom)
	}

	flip := func(off int) []byte {
		b := bytes.Clone(good)
		b[off] ^= 0x20
		return b
	}
	tests := []struct {
		name string
		in   []byte
		msg  string
	}{
		{"empty", nil, "empty"},
		{"short", good[:4], "truncated"},
		{"a snapshot", persist(t, c.store(0).fsm), "bad magic"},
		{"flipped header", flip(len(backupMagic) + 1), "header"}, // its opening brace
		{"flipped object", flip(len(good) / 2), "checksum mismatch"},
		{"flipped checksum", flip(len(good) - 1), "checksum mismatch"},
		{"truncated in the objects", good[:len(good)/2], "truncated"},
		{"truncated checksum", good[:len(good)-1], "truncated"},
		{"no checksum", good[:len(good)-sha256.Size], "truncated"},
		{"trailing data", append(bytes.Clone(good), 0), "data after the checksum"},
	}
	t.Setenv("TMPDIR", t.TempDir())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := InspectBackup(bytes.NewReader(tt.in))
			if !errors.Is(err, ErrBadBackup) || !bytes.Contains([]byte(err.Error()), []byte(tt.msg)) {
				t.Errorf("InspectBackup = %v, want ErrBadBackup mentioning %q", err, tt.msg)
			}
			for _, seekable := range []bool{true, false} {
				var r io.Reader = bytes.NewReader(tt.in)
				if !seekable {
					r = struct{ io.Reader }{r}
				}
				missing := filepath.Join(t.TempDir(), "new")
				if _, err := RestoreBackup(r, missing, "r0", "127.0.0.1:0"); !errors.Is(err, ErrBadBackup) {
					t.Errorf("RestoreBackup (seekable %v) = %v, want ErrBadBackup", seekable, err)
				}
				stillEmpty(t, missing, false)
				empty := t.TempDir()
				if _, err := RestoreBackup(bytes.NewReader(tt.in), empty, "r0", "127.0.0.1:0"); !errors.Is(err, ErrBadBackup) {
					t.Errorf("RestoreBackup into an empty dir = %v, want ErrBadBackup", err)
				}
				stillEmpty(t, empty, true)
			}
			noSpool(t, os.Getenv("TMPDIR"))
		})
	}

	// A failure while writing the data dir leaves nothing behind.
	dir := filepath.Join(t.TempDir(), "new")
	if _, err := RestoreBackup(&failAfterSeek{Reader: bytes.NewReader(good), err: boom}, dir, "r0", "127.0.0.1:0"); !errors.Is(err, boom) {
		t.Errorf("RestoreBackup with a reader failing on the second pass = %v, want %v", err, boom)
	}
	stillEmpty(t, dir, false)

	// A data dir with Raft state is refused, and left as it was.
	c.Stop(0)
	used := c.members[0].dir
	before := dirState(t, used)
	if _, err := RestoreBackup(bytes.NewReader(good), used, "r0", "127.0.0.1:0"); !errors.Is(err, ErrDataDirInUse) {
		t.Errorf("RestoreBackup into a used data dir = %v, want ErrDataDirInUse", err)
	}
	if after := dirState(t, used); !maps.Equal(before, after) {
		t.Errorf("refused RestoreBackup changed the data dir: %v -> %v", before, after)
	}
	onlySnaps := t.TempDir()
	if err := os.Mkdir(filepath.Join(onlySnaps, "snapshots"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := RestoreBackup(bytes.NewReader(good), onlySnaps, "r0", "127.0.0.1:0"); !errors.Is(err, ErrDataDirInUse) {
		t.Errorf("RestoreBackup into a dir with snapshots/ = %v, want ErrDataDirInUse", err)
	}
	// Anything else in the data dir (tls/, kubeconfig) is fine.
	withTLS := t.TempDir()
	if err := os.Mkdir(filepath.Join(withTLS, "tls"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := RestoreBackup(bytes.NewReader(good), withTLS, "r0", "127.0.0.1:0"); err != nil {
		t.Errorf("RestoreBackup into a dir with tls/: %v", err)
	}
}

// noSpool fails when RestoreBackup left a spool file in dir.
func noSpool(t *testing.T, dir string) {
	t.Helper()
	if left, _ := filepath.Glob(filepath.Join(dir, "litek8s-restore-*")); len(left) != 0 {
		t.Errorf("RestoreBackup left %v", left)
	}
}

// failAfterSeek fails every read after a seek elsewhere than where it is.
type failAfterSeek struct {
	*bytes.Reader
	err    error
	seeked bool
}

func (f *failAfterSeek) Seek(off int64, whence int) (int64, error) {
	f.seeked = f.seeked || off != 0 || whence != io.SeekCurrent
	return f.Reader.Seek(off, whence)
}

func (f *failAfterSeek) Read(p []byte) (int, error) {
	if f.seeked {
		return 0, f.err
	}
	return f.Reader.Read(p)
}

// dirState maps every path under dir to its size and modification time.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := make(map[string]string)
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		out[p] = fmt.Sprint(fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRestartOnNewRaftAddress(t *testing.T) {
	c := newTestCluster(t, 1, nil)
	obj := c.propose(cmWrite(kv.OpCreate, "ns", "a", 0))
	old := c.members[0].raftAddr
	c.Stop(0)
	c.members[0].raftAddr = "127.0.0.1:0" // another port
	c.start(c.members[0])
	c.WaitLeader()
	s := c.store(0)
	if s.RaftAddr() == old {
		t.Fatalf("restarted on the same address %s", old)
	}
	eventually(t, 10*time.Second, func() error {
		ms, err := s.Members()
		if err != nil {
			return err
		}
		if len(ms) != 1 || ms[0].RaftAddr != s.RaftAddr() {
			return fmt.Errorf("members %+v, want m0 at %s (was %s)", ms, s.RaftAddr(), old)
		}
		return nil
	})
	if got, _, err := s.Get(t.Context(), obj.Key, true); err != nil || got.RV != obj.RV {
		t.Errorf("after the address change: %v, %v", got, err)
	}
	// A member joins at the new address.
	c.members = append(c.members, &testMember{id: "m1", dir: filepath.Join(t.TempDir(), "m1"),
		raftAddr: "127.0.0.1:0", apiAddr: "127.0.0.1:0"})
	c.start(c.members[1])
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := c.store(1).Join(ctx, c.members[0].url); err != nil {
		t.Fatal(err)
	}
	c.checkConsistent()
}

func BenchmarkBackup(b *testing.B) {
	const n = 10000
	s := filledStore(b, n)
	backup := func(w io.Writer) BackupInfo {
		snap, res := s.fsm.backupView()
		info, err := writeBackup(w, snap, BackupInfo{Index: snap.applied, Resources: res})
		if err != nil {
			b.Fatal(err)
		}
		return info
	}
	var buf bytes.Buffer
	info := backup(&buf)
	if info.Objects != n+2 {
		b.Fatalf("%d objects", info.Objects)
	}
	b.Run("write/10000", func(b *testing.B) {
		b.SetBytes(info.Size)
		b.ReportAllocs()
		for b.Loop() {
			backup(io.Discard)
		}
	})
	b.Run("inspect/10000", func(b *testing.B) {
		b.SetBytes(info.Size)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := InspectBackup(bytes.NewReader(buf.Bytes())); err != nil {
				b.Fatal(err)
			}
		}
	})
}
