package raftstore

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/litek8s/litek8s/internal/kv"
	"github.com/litek8s/litek8s/internal/raftlog"
)

// A backup is:
//
//	magic "litek8s-backup-1\n", uvarint(len)+header (JSON, backupHeader),
//	a snapshot stream (snapshot.go) at the header's index, without the
//	members resource,
//	then the SHA-256 (32 bytes) of everything before it.
//
// The snapshot stream ends itself, so a backup can be read from a pipe.
const backupMagic = "litek8s-backup-1\n"

const (
	maxBackupHeader = 1 << 16
	// maxBackupRecord bounds one object's record: far above what the API
	// accepts, low enough that a corrupt length is not an allocation.
	maxBackupRecord = 64 << 20
)

// BackupInfo describes a backup.
type BackupInfo struct {
	// Index is the revision the backup holds the store at: every write
	// acknowledged before Backup was called has an index <= Index.
	Index uint64
	// Term is the Raft term of the member when it took the backup (for
	// information: a restored cluster starts its own terms).
	Term uint64
	// Created is when the backup was taken; Member is who took it.
	Created time.Time
	Member  string
	// Objects counts the objects, Resources by resource.
	Objects   int
	Resources map[string]int
	// Size is the backup's length in bytes, SHA256 its checksum (hex), as
	// found in its trailer.
	Size   int64
	SHA256 string
}

// backupHeader is the header's JSON.
type backupHeader struct {
	Index   uint64    `json:"index"`
	Term    uint64    `json:"term"`
	Created time.Time `json:"created"`
	Member  string    `json:"member"`
	Objects int       `json:"objects"`
}

// Backup writes a consistent backup of the whole store to w: it first
// waits for the read index (see Sync), so every write acknowledged before
// the call is in it, then captures the objects at one applied index (like
// a Raft snapshot) and streams them without holding any lock. The members
// resource (the addresses of this cluster's members) is left out. Any
// member may take a backup.
func (s *Store) Backup(ctx context.Context, w io.Writer) (BackupInfo, error) {
	if err := s.Sync(ctx); err != nil {
		return BackupInfo{}, fmt.Errorf("raftstore: backup: %w", err)
	}
	snap, resources := s.fsm.backupView()
	info := BackupInfo{Index: snap.applied, Term: s.raft.CurrentTerm(), Created: time.Now().UTC().Round(0),
		Member: s.cfg.ID, Resources: resources}
	return writeBackup(w, snap, info)
}

// backupView captures every table but the member and removal records at
// one applied index, in resource order, and counts the objects of each.
func (f *fsm) backupView() (*fsmSnapshot, map[string]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	snap := &fsmSnapshot{applied: f.applied, tr: f.tr}
	counts := make(map[string]int)
	for _, name := range slices.Sorted(maps.Keys(f.objs.tables)) {
		if name == membersResource || name == removalsResource { // this cluster's own
			continue
		}
		if v := f.objs.viewOf(name); v != nil && v.tree.Len() > 0 {
			snap.trees = append(snap.trees, v.tree)
			counts[name] = v.tree.Len()
		}
	}
	return snap, counts
}

// writeBackup streams snap as a backup described by info (Index and
// Resources set) and completes info.
func writeBackup(w io.Writer, snap *fsmSnapshot, info BackupInfo) (BackupInfo, error) {
	for _, n := range info.Resources {
		info.Objects += n
	}
	hdr, err := json.Marshal(backupHeader{Index: info.Index, Term: info.Term, Created: info.Created,
		Member: info.Member, Objects: info.Objects})
	if err != nil {
		return BackupInfo{}, fmt.Errorf("raftstore: backup: %w", err)
	}
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(w, h)}
	buf := append([]byte(backupMagic), binary.AppendUvarint(nil, uint64(len(hdr)))...)
	if _, err := cw.Write(append(buf, hdr...)); err != nil {
		return BackupInfo{}, fmt.Errorf("raftstore: backup: %w", err)
	}
	if err := snap.write(cw); err != nil {
		return BackupInfo{}, fmt.Errorf("raftstore: backup: %w", err)
	}
	sum := h.Sum(nil)
	if _, err := w.Write(sum); err != nil {
		return BackupInfo{}, fmt.Errorf("raftstore: backup: %w", err)
	}
	info.Size, info.SHA256 = cw.n+int64(len(sum)), hex.EncodeToString(sum)
	return info, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// InspectBackup reads a whole backup, checks its format and checksum and
// describes it. A truncated, altered or foreign file gives ErrBadBackup.
func InspectBackup(r io.Reader) (BackupInfo, error) {
	info, _, err := readBackup(r)
	return info, err
}

// backupLayout locates the snapshot stream within a backup.
type backupLayout struct{ start, end int64 }

// readBackup reads and checks a whole backup, through its end.
func readBackup(r io.Reader) (BackupInfo, backupLayout, error) {
	br := &hashingReader{r: bufio.NewReaderSize(&errReader{r: r}, 1<<16), h: sha256.New()}
	info, lay, err := br.read()
	if err != nil {
		var rerr *readError
		switch {
		case errors.As(err, &rerr): // the reader failed, not the backup
			return BackupInfo{}, backupLayout{}, fmt.Errorf("raftstore: read backup: %w", rerr.err)
		case br.n == 0 && errors.Is(err, io.EOF):
			err = errors.New("empty")
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			err = fmt.Errorf("unexpected end after %d bytes (truncated or altered)", br.n)
		}
		return BackupInfo{}, backupLayout{}, fmt.Errorf("%w: %w", ErrBadBackup, err)
	}
	return info, lay, nil
}

// errReader marks the errors of r other than io.EOF as readErrors.
type errReader struct{ r io.Reader }

type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }

func (e errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		err = &readError{err}
	}
	return n, err
}

// hashingReader hashes and counts the bytes read through it (and only
// those: its bufio.Reader reads ahead).
type hashingReader struct {
	r   *bufio.Reader
	h   hash.Hash
	n   int64
	one [1]byte
}

func (b *hashingReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.h.Write(p[:n])
	b.n += int64(n)
	return n, err
}

func (b *hashingReader) ReadByte() (byte, error) {
	c, err := b.r.ReadByte()
	if err == nil {
		b.one[0] = c
		b.h.Write(b.one[:])
		b.n++
	}
	return c, err
}

func (b *hashingReader) read() (BackupInfo, backupLayout, error) {
	var info BackupInfo
	magic := make([]byte, len(backupMagic))
	if _, err := io.ReadFull(b, magic); err != nil {
		return info, backupLayout{}, err
	}
	if string(magic) != backupMagic {
		return info, backupLayout{}, errors.New("not a litek8s backup (bad magic)")
	}
	n, err := binary.ReadUvarint(b)
	if err != nil {
		return info, backupLayout{}, err
	}
	if n > maxBackupHeader {
		return info, backupLayout{}, fmt.Errorf("header of %d bytes", n)
	}
	raw := make([]byte, n)
	if _, err := io.ReadFull(b, raw); err != nil {
		return info, backupLayout{}, err
	}
	var hdr backupHeader
	if err := json.Unmarshal(raw, &hdr); err != nil {
		return info, backupLayout{}, fmt.Errorf("header: %w", err)
	}
	info = BackupInfo{Index: hdr.Index, Term: hdr.Term, Created: hdr.Created, Member: hdr.Member,
		Resources: make(map[string]int)}
	lay := backupLayout{start: b.n}
	if err := b.readObjects(&info); err != nil {
		return info, lay, err
	}
	lay.end = b.n
	if info.Objects != hdr.Objects {
		return info, lay, fmt.Errorf("%d objects, header says %d", info.Objects, hdr.Objects)
	}
	want := b.h.Sum(nil)
	sum := make([]byte, sha256.Size)
	if _, err := io.ReadFull(b.r, sum); err != nil {
		return info, lay, err
	}
	if string(sum) != string(want) {
		return info, lay, fmt.Errorf("checksum mismatch: the content hashes to %x, the trailer says %x (altered)", want, sum)
	}
	if _, err := b.r.ReadByte(); err == nil {
		return info, lay, errors.New("data after the checksum")
	} else if err != io.EOF {
		return info, lay, err
	}
	info.Size, info.SHA256 = b.n+sha256.Size, hex.EncodeToString(sum)
	return info, lay, nil
}

// readObjects reads the snapshot stream and counts its objects.
func (b *hashingReader) readObjects(info *BackupInfo) error {
	magic := make([]byte, len(snapshotMagic))
	if _, err := io.ReadFull(b, magic); err != nil || string(magic) != snapshotMagic {
		return errors.New("bad snapshot magic")
	}
	applied, err := binary.ReadUvarint(b)
	if err != nil {
		return err
	}
	if applied != info.Index {
		return fmt.Errorf("objects at index %d, header says %d", applied, info.Index)
	}
	var rec []byte
	for {
		n, err := binary.ReadUvarint(b)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if n > maxBackupRecord {
			return fmt.Errorf("object %d: record of %d bytes", info.Objects+1, n)
		}
		rec = slices.Grow(rec[:0], int(n))[:n]
		if _, err := io.ReadFull(b, rec); err != nil {
			return err
		}
		rv, err := binary.ReadUvarint(b)
		if err != nil {
			return err
		}
		w, err := decodeRecord(rec)
		if err == nil && (w.Op != kv.OpCreate || w.Key.Resource == "" || len(w.Object) == 0 || rv == 0 || rv > applied) {
			err = fmt.Errorf("%v at revision %d", w.Key, rv)
		}
		if err != nil {
			return fmt.Errorf("object %d: %w", info.Objects+1, err)
		}
		info.Objects++
		info.Resources[w.Key.Resource]++
	}
}

// RestoreBackup prepares dataDir, which must hold no Raft state, so that
// Open(Config{ID: id, DataDir: dataDir, ...}) starts a new one-member
// cluster holding every object of the backup at its resourceVersion; later
// writes get greater ones. raftAddr is the member's address in the new
// configuration; once elected the member replaces it with its transport's
// real address, so a port picked at run time is fine. The whole backup is
// read and checked first: nothing is written unless it is valid. A reader
// that can seek is then read again from the start of the objects (it must
// not change meanwhile); one that cannot is spooled to a temporary file
// (os.TempDir). Other files in dataDir (tls/, say) are left alone.
func RestoreBackup(r io.Reader, dataDir, id, raftAddr string) (_ BackupInfo, err error) {
	if id == "" || raftAddr == "" || dataDir == "" {
		return BackupInfo{}, errors.New("raftstore: restore needs a data dir, an ID and a Raft address")
	}
	if err := checkNoRaftState(dataDir); err != nil {
		return BackupInfo{}, err
	}
	src, base := io.ReadSeeker(nil), int64(0)
	if rs, ok := r.(io.ReadSeeker); ok {
		if off, err := rs.Seek(0, io.SeekCurrent); err == nil {
			src, base = rs, off
		}
	}
	if src == nil {
		spool, err := os.CreateTemp("", "litek8s-restore-*")
		if err != nil {
			return BackupInfo{}, fmt.Errorf("raftstore: restore: spool: %w", err)
		}
		defer os.Remove(spool.Name())
		defer spool.Close()
		tee := &spoolReader{r: r, w: spool}
		src, r = spool, tee
		defer func() {
			if tee.err != nil {
				err = fmt.Errorf("raftstore: restore: spool: %w", tee.err)
			}
		}()
	}
	info, lay, err := readBackup(r)
	if err != nil {
		return BackupInfo{}, err
	}
	if info.Index == 0 {
		return BackupInfo{}, fmt.Errorf("%w: at index 0", ErrBadBackup)
	}
	if _, err := src.Seek(base+lay.start, io.SeekStart); err != nil {
		return BackupInfo{}, fmt.Errorf("raftstore: restore: %w", err)
	}
	if err := checkNoRaftState(dataDir); err != nil { // again: reading took a while
		return BackupInfo{}, err
	}
	_, statErr := os.Stat(dataDir)
	stream := io.LimitReader(src, lay.end-lay.start)
	if err := writeRaftState(dataDir, raft.ServerID(id), raft.ServerAddress(raftAddr), info.Index, stream); err != nil {
		// Remove what was written (none of it existed), so that the
		// restore can be run again.
		os.RemoveAll(filepath.Join(dataDir, "snapshots"))
		os.RemoveAll(filepath.Join(dataDir, raftlog.Dir))
		if errors.Is(statErr, os.ErrNotExist) {
			os.Remove(dataDir)
		}
		return BackupInfo{}, fmt.Errorf("raftstore: restore into %s: %w", dataDir, err)
	}
	return info, nil
}

// spoolReader copies what it reads to w; err is w's first error (which
// ends the read).
type spoolReader struct {
	r   io.Reader
	w   io.Writer
	err error
}

func (t *spoolReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		if _, werr := t.w.Write(p[:n]); werr != nil {
			t.err = werr
			return n, werr
		}
	}
	return n, err
}

// checkNoRaftState refuses a data dir with a Raft log (wal/, or an
// earlier version's raft.db) or snapshots/.
func checkNoRaftState(dataDir string) error {
	for _, name := range []string{raftlog.Dir, raftlog.BoltFile, "snapshots"} {
		p := filepath.Join(dataDir, name)
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("%w: %s exists; restore into a new data dir", ErrDataDirInUse, p)
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("raftstore: restore: %w", err)
		}
	}
	return nil
}

// restoredTerm is the term of the restored snapshot and the stable store's
// current term: a new cluster's first.
const restoredTerm = 1

// writeRaftState writes a Raft snapshot at index holding stream and a
// configuration of one voter, then the Raft log (empty) with the current
// term (in that order: a snapshot without a log still opens).
func writeRaftState(dataDir string, id raft.ServerID, addr raft.ServerAddress, index uint64, stream io.Reader) error {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dataDir, 2, hclog.NewNullLogger())
	if err != nil {
		return err
	}
	conf := raft.Configuration{Servers: []raft.Server{{Suffrage: raft.Voter, ID: id, Address: addr}}}
	sink, err := snaps.Create(raft.SnapshotVersionMax, index, restoredTerm, conf, index, addrEncoder{})
	if err != nil {
		return err
	}
	if _, err := io.Copy(sink, stream); err != nil {
		sink.Cancel()
		return err
	}
	if err := sink.Close(); err != nil {
		return err
	}
	logs, err := raftlog.Open(dataDir, raftlog.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	// raft's key for the current term (keyCurrentTerm).
	if err := logs.SetUint64([]byte("CurrentTerm"), restoredTerm); err != nil {
		logs.Close()
		return err
	}
	return logs.Close()
}

// addrEncoder encodes the snapshot's legacy peer list (FileSnapshotStore
// calls EncodePeer even for version 1 snapshots, whose Configuration is
// what Raft reads) the way NetworkTransport does. No other method is used.
type addrEncoder struct{ raft.Transport }

func (addrEncoder) EncodePeer(_ raft.ServerID, addr raft.ServerAddress) []byte { return []byte(addr) }
