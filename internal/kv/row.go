package kv

import (
	"encoding/binary"
	"time"
)

// Row is the Table cells of one object packed into one byte string, so
// that an object keeps one exactly sized allocation for its cells instead
// of a []Cell (48 bytes a cell, plus a buffer for their JSON): at 100,000
// ConfigMaps that is ~20 B an object instead of ~220 B.
//
// Each cell is a tag byte, then the parts the tag announces:
//
//	rowJSON:  uvarint length, then the JSON bytes (Cell.JSON non-nil)
//	rowSince: Cell.Since (non-zero) in Unix seconds, 5 bytes little-endian
//	          (1970 to year 36812: every timestamp kube writes)
//	rowWide:  instead, Cell.Since in Unix seconds as a varint (any other)
//	rowNanos: uvarint nanoseconds of Cell.Since within its second
//
// A cell without rowJSON is a clock cell (Cell.JSON nil). Fixed-width
// seconds cost what a varint of today's would (5 bytes) and read with no
// loop: rendering a Table reads every row's cells. Build a Row with
// MakeRow, read it with Read or Cells. A Row is immutable once built.
type Row []byte

// Cell tags: which parts follow the tag byte.
const (
	rowJSON  = 1 << iota // uvarint length and the JSON bytes
	rowSince             // Unix seconds, 5 bytes little-endian
	rowWide              // Unix seconds, varint
	rowNanos             // uvarint nanoseconds (only when not zero)
)

// sinceBytes is the width of rowSince's seconds; maxSince is past the
// last second it holds.
const (
	sinceBytes = 5
	maxSince   = 1 << (8 * sinceBytes)
)

// MakeRow packs cells into a Row of exactly its size (one allocation, no
// spare capacity). MakeRow of no cells is nil.
func MakeRow(cells []Cell) Row {
	n := 0
	for _, c := range cells {
		n += cellSize(c)
	}
	if n == 0 {
		return nil
	}
	r := make(Row, 0, n)
	for _, c := range cells {
		r = appendCell(r, c)
	}
	return r
}

// cellSize is the length of c's encoding.
func cellSize(c Cell) int {
	n := 1
	if c.JSON != nil {
		n += uvarintLen(uint64(len(c.JSON))) + len(c.JSON)
	}
	if !c.Since.IsZero() {
		if sec := c.Since.Unix(); sec >= 0 && sec < maxSince {
			n += sinceBytes
		} else {
			n += varintLen(sec)
		}
		if ns := c.Since.Nanosecond(); ns != 0 {
			n += uvarintLen(uint64(ns))
		}
	}
	return n
}

// appendCell appends the encoding of c.
func appendCell(dst []byte, c Cell) []byte {
	tag, sec, ns := byte(0), c.Since.Unix(), c.Since.Nanosecond()
	if c.JSON != nil {
		tag |= rowJSON
	}
	if !c.Since.IsZero() {
		if sec >= 0 && sec < maxSince {
			tag |= rowSince
		} else {
			tag |= rowWide
		}
		if ns != 0 {
			tag |= rowNanos
		}
	}
	dst = append(dst, tag)
	if tag&rowJSON != 0 {
		dst = binary.AppendUvarint(dst, uint64(len(c.JSON)))
		dst = append(dst, c.JSON...)
	}
	switch {
	case tag&rowSince != 0:
		dst = append(dst, byte(sec), byte(sec>>8), byte(sec>>16), byte(sec>>24), byte(sec>>32))
	case tag&rowWide != 0:
		dst = binary.AppendVarint(dst, sec)
	}
	if tag&rowNanos != 0 {
		dst = binary.AppendUvarint(dst, uint64(ns))
	}
	return dst
}

// Read decodes the first cell of *r into *c and advances *r past it. It
// returns false, leaving *c as it was, at the end of *r, or when *r is not
// a Row's encoding (a Row is only ever built by MakeRow: reading stops
// rather than panics). The cell's JSON points into the Row; its Since is
// in UTC (only ages are taken of it: the instant is exact). Rendering reads
// a Row in place with Read, allocating nothing:
//
//	var c kv.Cell
//	for rest := row; rest.Read(&c); {
//		...
//	}
func (r *Row) Read(c *Cell) bool {
	b := *r
	if len(b) == 0 {
		return false
	}
	tag, i := b[0], 1
	var js []byte
	if tag&rowJSON != 0 {
		n, k := uint64(0), 0
		if i < len(b) && b[i] < 0x80 { // the usual one-byte length
			n, k = uint64(b[i]), 1
		} else if n, k = binary.Uvarint(b[i:]); k <= 0 {
			return false
		}
		i += k
		if n > uint64(len(b)-i) {
			return false
		}
		js = b[i : i+int(n) : i+int(n)]
		i += int(n)
	}
	var since time.Time
	if tag&(rowSince|rowWide|rowNanos) != 0 {
		var sec int64
		switch {
		case tag&rowSince != 0:
			if len(b)-i < sinceBytes {
				return false
			}
			s := b[i : i+sinceBytes : i+sinceBytes]
			sec = int64(s[0]) | int64(s[1])<<8 | int64(s[2])<<16 | int64(s[3])<<24 | int64(s[4])<<32
			i += sinceBytes
		case tag&rowWide != 0:
			var k int
			if sec, k = binary.Varint(b[i:]); k <= 0 {
				return false
			}
			i += k
		default: // nanoseconds without seconds: not MakeRow's
			return false
		}
		var ns uint64
		if tag&rowNanos != 0 {
			var k int
			if ns, k = binary.Uvarint(b[i:]); k <= 0 || ns >= uint64(time.Second) {
				return false
			}
			i += k
		}
		since = time.Unix(sec, int64(ns)).UTC()
	}
	c.JSON, c.Since, *r = js, since, b[i:]
	return true
}

// Cells decodes every cell of r (nil for an empty Row), for tests and
// callers that want kv.Cell values; serving renders a Row with
// table.AppendCells without decoding it into a slice.
func (r Row) Cells() []Cell {
	var cells []Cell
	var c Cell
	for rest := r; rest.Read(&c); {
		cells = append(cells, c)
	}
	return cells
}

// Len returns the number of cells in r.
func (r Row) Len() int {
	n := 0
	var c Cell
	for rest := r; rest.Read(&c); {
		n++
	}
	return n
}

func uvarintLen(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

func varintLen(x int64) int {
	ux := uint64(x) << 1 // binary.AppendVarint's zig-zag encoding
	if x < 0 {
		ux = ^ux
	}
	return uvarintLen(ux)
}
