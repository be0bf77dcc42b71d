//go:build linux

package memtrim

import (
	"encoding/json"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

const smapsFixture = `00400000-00c00000 r-xp 00000000 fd:01 4242    /usr/bin/node
Size:               8192 kB
Rss:                6144 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me
00c00000-01400000 r--p 00800000 fd:01 4242    /usr/bin/node
Size:               8192 kB
Rss:                5120 kB
Anonymous:             0 kB
01400000-01402000 r--p 01000000 fd:01 4242    /usr/bin/node
Rss:                   8 kB
Anonymous:             8 kB
01402000-01500000 rw-p 01002000 fd:01 4242    /usr/bin/node
Rss:                 100 kB
Anonymous:            40 kB
7f0000000000-7f0000100000 r-xp 00000000 fd:01 77      /usr/lib/libc.so.6
Rss:                 800 kB
Anonymous:             0 kB
7f0000200000-7f0000300000 rw-p 00000000 00:00 0
Rss:                1024 kB
Anonymous:          1024 kB
`

func TestReleasable(t *testing.T) {
	all, err := parseSmaps([]byte(smapsFixture))
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 6 {
		t.Fatalf("parsed %d mappings, want 6", len(all))
	}
	got := releasable(all, 4242)
	want := []mapping{
		{start: 0x400000, end: 0xc00000, perms: [4]byte{'r', '-', 'x', 'p'}, inode: 4242, rss: 6144 << 10},
		{start: 0xc00000, end: 0x1400000, perms: [4]byte{'r', '-', '-', 'p'}, inode: 4242, rss: 5120 << 10},
	}
	// Not the RELRO page (a modified copy), not the writable data, not
	// another file's text, not anonymous memory.
	if !reflect.DeepEqual(got, want) {
		t.Errorf("releasable = %+v\nwant %+v", got, want)
	}
	if got := releasable(all, 0); got != nil {
		t.Errorf("inode 0 (anonymous) gave %+v, want nothing", got)
	}
}

func TestParseSmapsRefusesGarbage(t *testing.T) {
	for _, in := range []string{"zz-00 r--p 0 0:0 1 /x\n", "00400000 r--p 0 0:0 1\n", "2000-1000 r--p 0 0:0 1 /x\n", "1000-2000 r--p\n"} {
		if _, err := parseSmaps([]byte(in)); err == nil {
			t.Errorf("parseSmaps(%q) accepted it", in)
		}
	}
}

// TestTrimReleasesExecutablePages trims this test binary: its file-backed
// RSS falls, and the code and data the process uses afterwards (encoding/
// json's reflection over type data, which Trim unmapped) still work.
func TestTrimReleasesExecutablePages(t *testing.T) {
	before, err := readStatus()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Trim()
	if err != nil {
		t.Fatal(err)
	}
	after, err := readStatus()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("RssFile %d → %d KiB, VmRSS %d → %d KiB, unmapped %d KiB", before["RssFile"]>>10, after["RssFile"]>>10,
		r.RSSBefore>>10, r.RSSAfter>>10, r.Unmapped>>10)
	if r.Unmapped < 1<<20 {
		t.Errorf("unmapped %d bytes of the executable, want at least 1 MiB", r.Unmapped)
	}
	// What the test runs after Trim is mapped back at once (64 KiB at a
	// time): RssFile falls by less than what was unmapped.
	if after["RssFile"] >= before["RssFile"] {
		t.Errorf("RssFile %d → %d bytes after unmapping %d", before["RssFile"], after["RssFile"], r.Unmapped)
	}
	if r.RSSAfter >= r.RSSBefore {
		t.Errorf("VmRSS %d → %d", r.RSSBefore, r.RSSAfter)
	}
	b, err := json.Marshal(map[string]any{"host": must(os.Hostname()), "n": []int{1, 2}})
	if err != nil || len(b) == 0 {
		t.Fatalf("json after Trim: %s, %v", b, err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestTrimExecutableThreshold: below its threshold TrimExecutable only
// measures; at 0 it unmaps, and the next measurement finds less mapped.
func TestTrimExecutableThreshold(t *testing.T) {
	before, err := TrimExecutable(1 << 62)
	if err != nil || before < 1<<20 {
		t.Fatalf("resident executable %d bytes, %v; want at least 1 MiB", before, err)
	}
	if _, err := TrimExecutable(0); err != nil {
		t.Fatal(err)
	}
	after, err := TrimExecutable(1 << 62)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("executable resident %d KiB → %d KiB", before>>10, after>>10)
	if after >= before {
		t.Errorf("executable resident %d → %d bytes after TrimExecutable(0)", before, after)
	}
}

// parseSmaps reads this process's real smaps as a plain line split does,
// and allocates only to grow its result, not per line nor per mapping:
// raftstore reads smaps every second.
func TestParseSmapsRealAndAllocations(t *testing.T) {
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	var headers int
	var rss uint64
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":"):
			headers++
		case len(f) >= 2 && f[0] == "Rss:":
			n, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			rss += n << 10
		}
	}
	all, err := parseSmaps(b)
	if err != nil {
		t.Fatal(err)
	}
	var got uint64
	for _, m := range all {
		got += m.rss
	}
	if len(all) != headers || got != rss || headers == 0 {
		t.Fatalf("parseSmaps: %d mappings, Rss %d; a plain split: %d, %d", len(all), got, headers, rss)
	}
	allocs := testing.AllocsPerRun(5, func() { parseSmaps(b) })
	if limit := 20.0; allocs > limit {
		t.Errorf("parseSmaps of %d mappings (%d bytes): %.0f allocations, want at most %.0f", headers, len(b), allocs, limit)
	}
}
