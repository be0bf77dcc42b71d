//go:build linux

package memtrim

import (
	"bytes"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Result tells what a Trim gave back.
type Result struct {
	// RSSBefore and RSSAfter are VmRSS, in bytes.
	RSSBefore, RSSAfter uint64
	// Unmapped is the resident size of the executable's mappings Trim
	// released, in bytes.
	Unmapped uint64
}

// Trim returns the heap's free memory to the system and unmaps the
// executable's read-only mappings. It is safe while other goroutines run.
func Trim() (Result, error) {
	var r Result
	before, err := readStatus()
	if err != nil {
		return r, err
	}
	r.RSSBefore = before["VmRSS"]
	debug.FreeOSMemory()
	regions, err := ownReadOnlyMappings()
	if err != nil {
		return r, err
	}
	if err := unmap(regions); err != nil {
		return r, err
	}
	for _, m := range regions {
		r.Unmapped += m.rss
	}
	after, err := readStatus()
	if err != nil {
		return r, err
	}
	r.RSSAfter = after["VmRSS"]
	return r, nil
}

// TrimExecutable unmaps the executable's read-only mappings, as Trim
// does, when they hold at least minRSS bytes, and returns their resident
// size. Run periodically it keeps mapped only the code and data the
// process used since the last call: a burst of work (a fill of 100,000
// objects, a first kubectl session) maps tens of MiB of the binary that
// steady serving never touches again. What is used again faults back in
// a page at a time (see unmap).
func TrimExecutable(minRSS uint64) (uint64, error) {
	regions, err := ownReadOnlyMappings()
	if err != nil {
		return 0, err
	}
	var rss uint64
	for _, m := range regions {
		rss += m.rss
	}
	if rss < minRSS || rss == 0 {
		return rss, nil
	}
	return rss, unmap(regions)
}

// unmap drops the executable's read-only regions from this process's
// mappings and has what the process touches again come back a page at a
// time.
//
// The kernel maps a file's pages a folio at a time, and the page cache
// holds an executable read whole (by the loader's readahead, or a copy)
// in large folios: touching one byte of code or of the pclntab maps tens
// to hundreds of KiB around it. A serving member touches a few thousand
// scattered pages of its binary (the GC's stack maps, the code it runs)
// and held 34 MiB of it. So unmap also marks the regions MADV_RANDOM (no
// readahead when they fault) and asks the kernel to drop the binary's
// cached pages that no process maps (POSIX_FADV_DONTNEED): what faults in
// again is read as single pages.
func unmap(regions []mapping) error {
	for _, m := range regions {
		for _, advice := range []uintptr{unix.MADV_DONTNEED, unix.MADV_RANDOM} {
			if _, _, errno := unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, advice); errno != 0 {
				return fmt.Errorf("madvise %#x-%#x: %w", m.start, m.end, errno)
			}
		}
	}
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("fadvise executable: %w", err)
	}
	return nil
}

// mapping is one line of /proc/self/smaps and the fields Trim needs.
type mapping struct {
	start, end uintptr
	perms      [4]byte // "r-xp"
	inode      uint64
	rss, anon  uint64 // bytes
}

// ownReadOnlyMappings lists the mappings of the running executable that
// are neither writable nor hold a private modified page.
func ownReadOnlyMappings() ([]mapping, error) {
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/self/exe", &st); err != nil {
		return nil, fmt.Errorf("stat executable: %w", err)
	}
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return nil, err
	}
	all, err := parseSmaps(b)
	if err != nil {
		return nil, err
	}
	return releasable(all, st.Ino), nil
}

// releasable keeps the mappings of the file with inode ino that Trim may
// unmap: not writable, and without an anonymous (copied-on-write) page.
func releasable(all []mapping, ino uint64) []mapping {
	var out []mapping
	for _, m := range all {
		if m.inode == ino && ino != 0 && m.perms[1] != 'w' && m.anon == 0 {
			out = append(out, m)
		}
	}
	return out
}

// parseSmaps reads the format of proc(5)'s /proc/PID/smaps: a header line
// per mapping ("start-end perms offset dev inode [path]") followed by
// "Key: value kB" lines.
func parseSmaps(b []byte) ([]mapping, error) {
	// Line by line without allocating per line: smaps has ~25 lines per
	// mapping (strings.Fields on each line was 5,000 allocations a pass in
	// a test process; now the slice's growth only).
	var out []mapping
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		var f [5][]byte // the header's first five; a size line's two
		n := 0
		for field := range bytes.FieldsSeq(line) {
			if n == len(f) {
				break
			}
			f[n] = field
			n++
		}
		if n == 0 {
			continue
		}
		if key, ok := bytes.CutSuffix(f[0], []byte(":")); ok {
			if len(out) == 0 || n < 2 {
				continue // VmFlags and the like carry no size
			}
			switch string(key) { // no allocation: compared, not kept
			case "Rss":
				if v, err := strconv.ParseUint(string(f[1]), 10, 64); err == nil {
					out[len(out)-1].rss = v << 10
				}
			case "Anonymous":
				if v, err := strconv.ParseUint(string(f[1]), 10, 64); err == nil {
					out[len(out)-1].anon = v << 10
				}
			}
			continue
		}
		lo, hi, ok := bytes.Cut(f[0], []byte("-"))
		start, err1 := strconv.ParseUint(string(lo), 16, 64)
		end, err2 := strconv.ParseUint(string(hi), 16, 64)
		ino, err3 := strconv.ParseUint(string(f[4]), 10, 64) // f[4] is nil when n < 5: an error
		if !ok || err1 != nil || err2 != nil || err3 != nil || end < start {
			return nil, fmt.Errorf("smaps: bad header %q", line)
		}
		m := mapping{start: uintptr(start), end: uintptr(end), inode: ino}
		copy(m.perms[:], f[1])
		out = append(out, m)
	}
	return out, nil
}

// readStatus reads the "kB" fields of /proc/self/status, in bytes.
func readStatus() (map[string]uint64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for line := range strings.SplitSeq(string(b), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		num, found := strings.CutSuffix(strings.TrimSpace(val), " kB")
		if !found {
			continue
		}
		if n, err := strconv.ParseUint(num, 10, 64); err == nil {
			out[key] = n << 10
		}
	}
	return out, nil
}
