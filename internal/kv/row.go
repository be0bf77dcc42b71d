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
// MakeRow, render it with AppendJSON, read it with Decode or Cells. A Row is immutable once built.
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

// Decode decodes the first cells of r into cells, as many as fit, and
// returns how many it decoded and the rest of r. It stops early when r
// is not a Row's encoding (a Row is only ever built by MakeRow: reading
// stops rather than panics). A cell's JSON points into r; its Since is in
// UTC (only ages are taken of it: the instant is exact). Decode into a
// fixed array allocates nothing; rendering uses AppendJSON instead.
func (r Row) Decode(cells []Cell) (int, Row) {
	b, n := r, 0
	for ; n < len(cells) && len(b) > 0; n++ {
		js, since, rest, ok := cutCell(b)
		if !ok {
			break
		}
		cells[n], b = Cell{JSON: js, Since: since}, rest
	}
	return n, b
}

// AppendJSON appends r as the JSON array of its cells, the way a Cell is
// rendered (see Cell): a cell's JSON as it is; a clock cell as the JSON
// string of age(since); a JSON string with a Since as the string with
// " (age(since) ago)" added inside it. age appends the text of an age (the
// contents of a JSON string) and is called with a zero since for a clock
// cell without one. Reading and rendering are one pass over r, with no
// Cell decoded: this is every row of every Table a member serves.
// AppendJSON stops at the first byte that is not a Row's encoding.
func (r Row) AppendJSON(dst []byte, age func(dst []byte, since time.Time) []byte) []byte {
	dst = append(dst, '[')
	start := len(dst)
	for b := r; len(b) > 0; {
		// The usual cells first, inline (rendering a Table of them is
		// no slower than from a []Cell). Most: JSON only, shorter than
		// 128 bytes.
		if len(b) > 1 && b[0] == rowJSON && b[1] < 0x80 && int(b[1]) <= len(b)-2 {
			end := 2 + int(b[1])
			dst = append(append(dst, b[2:end]...), ',')
			b = b[end:]
			continue
		}
		// Ages: clock cells of a whole second after 1970.
		if len(b) > sinceBytes && b[0] == rowSince {
			s := b[1 : 1+sinceBytes : 1+sinceBytes]
			sec := int64(s[0]) | int64(s[1])<<8 | int64(s[2])<<16 | int64(s[3])<<24 | int64(s[4])<<32
			dst = append(age(append(dst, '"'), time.Unix(sec, 0).UTC()), '"', ',')
			b = b[1+sinceBytes:]
			continue
		}
		js, since, rest, ok := cutCell(b)
		if !ok {
			break
		}
		switch n := len(js); {
		case js == nil:
			dst = append(age(append(dst, '"'), since), '"')
		case !since.IsZero() && n >= 2 && js[n-1] == '"':
			dst = append(dst, js[:n-1]...)
			dst = append(age(append(dst, " ("...), since), ` ago)"`...)
		default:
			dst = append(dst, js...)
		}
		dst, b = append(dst, ','), rest
	}
	if len(dst) > start { // the comma after the last cell
		dst = dst[:len(dst)-1]
	}
	return append(dst, ']')
}

// cutCell decodes the cell at the start of b: its JSON and Since, and the
// rest of b; ok is false when b does not start with a Row's cell.
func cutCell(b []byte) (js []byte, since time.Time, rest []byte, ok bool) {
	tag, i := b[0], 1
	if tag&rowJSON != 0 {
		l, k := uint64(0), 0
		if i < len(b) && b[i] < 0x80 { // the usual one-byte length
			l, k = uint64(b[i]), 1
		} else if l, k = binary.Uvarint(b[i:]); k <= 0 {
			return nil, time.Time{}, nil, false
		}
		i += k
		if l > uint64(len(b)-i) {
			return nil, time.Time{}, nil, false
		}
		js = b[i : i+int(l) : i+int(l)]
		i += int(l)
	}
	since, k := readSince(tag, b[i:])
	if k < 0 {
		return nil, time.Time{}, nil, false
	}
	return js, since, b[i+k:], true
}

// readSince reads the Since announced by tag at the start of b: the time
// and the bytes it took, or k < 0 when b is not a Row's encoding.
func readSince(tag byte, b []byte) (since time.Time, k int) {
	if tag&(rowSince|rowWide|rowNanos) == 0 {
		return time.Time{}, 0
	}
	var sec int64
	switch {
	case tag&rowSince != 0:
		if len(b) < sinceBytes {
			return time.Time{}, -1
		}
		s := b[:sinceBytes:sinceBytes]
		sec = int64(s[0]) | int64(s[1])<<8 | int64(s[2])<<16 | int64(s[3])<<24 | int64(s[4])<<32
		k = sinceBytes
	case tag&rowWide != 0:
		var n int
		if sec, n = binary.Varint(b); n <= 0 {
			return time.Time{}, -1
		}
		k = n
	default: // nanoseconds without seconds: not MakeRow's
		return time.Time{}, -1
	}
	var ns uint64
	if tag&rowNanos != 0 {
		n := 0
		if ns, n = binary.Uvarint(b[k:]); n <= 0 || ns >= uint64(time.Second) {
			return time.Time{}, -1
		}
		k += n
	}
	return time.Unix(sec, int64(ns)).UTC(), k
}

// Cells decodes every cell of r (nil for an empty Row), for tests and
// callers that want kv.Cell values; serving renders a Row with
// table.AppendCells without decoding it into a slice.
func (r Row) Cells() []Cell {
	var cells []Cell
	var buf [8]Cell
	for n, rest := r.Decode(buf[:]); n > 0; n, rest = rest.Decode(buf[:]) {
		cells = append(cells, buf[:n]...)
	}
	return cells
}

// Len returns the number of cells in r.
func (r Row) Len() int {
	total := 0
	var buf [8]Cell
	for n, rest := r.Decode(buf[:]); n > 0; n, rest = rest.Decode(buf[:]) {
		total += n
	}
	return total
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
