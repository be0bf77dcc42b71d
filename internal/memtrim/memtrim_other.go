//go:build !linux

package memtrim

import (
	"errors"
	"runtime/debug"
)

// Result tells what a Trim gave back.
type Result struct {
	RSSBefore, RSSAfter, Unmapped uint64
}

// Trim returns the heap's free memory to the system; unmapping the
// executable's pages needs Linux.
func Trim() (Result, error) {
	debug.FreeOSMemory()
	return Result{}, errors.ErrUnsupported
}

// TrimExecutable needs Linux: elsewhere it does nothing.
func TrimExecutable(minRSS uint64) (uint64, error) { return 0, errors.ErrUnsupported }
