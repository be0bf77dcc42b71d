package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// rotatingFile is an append-only file that is renamed aside when a write
// would take it past maxSize, as kube's audit log does with lumberjack:
// the same flags (maxsize in MB, maxbackup, maxage in days) and the same
// backup names (<name>-<UTC time as 2006-01-02T15-04-05.000><ext>), so
// that tools reading kube's rotated audit logs read these. Unlike
// lumberjack v2.2.1, whose Close leaves its pruning goroutine running
// (natefinch/lumberjack#56, #205, open), old backups are removed at the
// rotation itself: no goroutine.
//
// Concurrency: not safe for concurrent use; Log serialises the writes.
type rotatingFile struct {
	path       string
	maxSize    int64 // bytes
	maxBackups int
	maxAge     time.Duration
	now        func() time.Time

	f    *os.File
	size int64
}

// backupTimeFormat is lumberjack's.
const backupTimeFormat = "2006-01-02T15-04-05.000"

// defaultMaxSizeMB is lumberjack's default, which kube keeps for 0.
const defaultMaxSizeMB = 100

func openRotating(cfg Config, now func() time.Time) (*rotatingFile, error) {
	mb := cfg.MaxSizeMB
	if mb == 0 {
		mb = defaultMaxSizeMB
	}
	r := &rotatingFile{path: cfg.Path, maxSize: int64(mb) << 20, maxBackups: cfg.MaxBackups,
		maxAge: time.Duration(cfg.MaxAgeDays) * 24 * time.Hour, now: now}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *rotatingFile) open() error {
	if err := os.MkdirAll(filepath.Dir(r.path), 0o755); err != nil {
		return fmt.Errorf("audit: log directory: %w", err)
	}
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("audit: log file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("audit: log file: %w", err)
	}
	r.f, r.size = f, st.Size()
	return nil
}

// Write appends b, rotating first when b would not fit (an event larger
// than maxSize goes alone into a file of its own).
func (r *rotatingFile) Write(b []byte) (int, error) {
	if r.size > 0 && r.size+int64(len(b)) > r.maxSize {
		if err := r.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := r.f.Write(b)
	r.size += int64(n)
	return n, err
}

// rotate renames the file aside, opens a new one and removes the backups
// past maxBackups and maxAge.
func (r *rotatingFile) rotate() error {
	if err := r.f.Close(); err != nil {
		return fmt.Errorf("audit: close log file: %w", err)
	}
	ext := filepath.Ext(r.path)
	backup := strings.TrimSuffix(r.path, ext) + "-" + r.now().UTC().Format(backupTimeFormat) + ext
	if err := os.Rename(r.path, backup); err != nil {
		return fmt.Errorf("audit: rotate log file: %w", err)
	}
	if err := r.open(); err != nil {
		return err
	}
	return r.prune()
}

// prune removes the oldest backups beyond maxBackups (0: keep all) and
// those older than maxAge (0: no limit), by the time in their names.
func (r *rotatingFile) prune() error {
	if r.maxBackups == 0 && r.maxAge == 0 {
		return nil
	}
	ext := filepath.Ext(r.path)
	prefix := filepath.Base(strings.TrimSuffix(r.path, ext)) + "-"
	entries, err := os.ReadDir(filepath.Dir(r.path))
	if err != nil {
		return fmt.Errorf("audit: prune log backups: %w", err)
	}
	type backup struct {
		name string
		t    time.Time
	}
	var bs []backup
	for _, e := range entries {
		ts, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !strings.HasSuffix(ts, ext) {
			continue
		}
		t, err := time.Parse(backupTimeFormat, strings.TrimSuffix(ts, ext))
		if err != nil {
			continue
		}
		bs = append(bs, backup{e.Name(), t})
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].t.After(bs[j].t) }) // newest first
	cutoff := r.now().Add(-r.maxAge)
	for i, b := range bs {
		if (r.maxBackups > 0 && i >= r.maxBackups) || (r.maxAge > 0 && b.t.Before(cutoff)) {
			if err := os.Remove(filepath.Join(filepath.Dir(r.path), b.name)); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("audit: prune log backups: %w", err)
			}
		}
	}
	return nil
}

// Close closes the file.
func (r *rotatingFile) Close() error { return r.f.Close() }
