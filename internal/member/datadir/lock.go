package datadir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// LockFile is the file in a data dir whose lock the running member holds;
// it also holds that member's pid, for the message a second one gets.
const LockFile = "lock"

// ErrInUse is Lock's answer when another process holds the data dir.
var ErrInUse = errors.New("data dir is in use by another process")

// Lock is a member's hold on its data dir: one process at a time, for
// the two members on one dir would write the same raft.db and tls/.
type Lock struct {
	f    *os.File
	once sync.Once
}

// TryLock takes the data dir's lock (an flock on <dir>/lock, released by
// the kernel when the process dies, so a crash leaves no stale lock) at
// once, or fails with an InUseError naming the dir and the holder's pid:
// it never waits. dir must exist. Nothing in dir changes when it fails (the
// lock file is created only where it does not exist yet).
func TryLock(dir string) (*Lock, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data dir %s: lock: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, inUse(dir, path)
		}
		return nil, fmt.Errorf("data dir %s: lock %s: %w", dir, path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("data dir %s: lock %s: %w", dir, path, err)
	}
	return &Lock{f: f}, nil
}

// inUse is the InUseError of dir, with the holder's pid when the lock
// file tells it.
func inUse(dir, path string) error {
	e := &InUseError{Dir: dir}
	if b, err := os.ReadFile(path); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			e.PID = pid
		}
	}
	return e
}

// InUseError is TryLock's answer when another process holds the data dir
// (errors.Is(err, ErrInUse)).
type InUseError struct {
	Dir string
	PID int // 0: unknown
}

func (e *InUseError) Error() string {
	holder := ""
	if e.PID > 0 {
		holder = fmt.Sprintf(" (pid %d)", e.PID)
	}
	return fmt.Sprintf("data dir %s is in use by another process%s: stop it first, or give this member its own --data-dir",
		e.Dir, holder)
}

// Is makes errors.Is(err, ErrInUse) true.
func (e *InUseError) Is(target error) bool { return target == ErrInUse }

// Unlock releases the lock; the lock file stays (a member that starts next
// rewrites the pid in it). Calling it again, or on nil, does nothing.
func (l *Lock) Unlock() {
	if l == nil {
		return
	}
	l.once.Do(func() { l.f.Close() }) // closing the last descriptor releases the flock
}
