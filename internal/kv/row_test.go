package kv

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// sameCells compares decoded cells with the cells encoded: the JSON bytes
// and nil-ness, and the instant of Since (a Row keeps the instant, not the
// location).
func sameCells(t *testing.T, got, want []Cell) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("decoded %d cells, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if (g.JSON == nil) != (w.JSON == nil) || !bytes.Equal(g.JSON, w.JSON) {
			t.Errorf("cell %d: JSON %q (nil %v), want %q (nil %v)", i, g.JSON, g.JSON == nil, w.JSON, w.JSON == nil)
		}
		if g.Since.IsZero() != w.Since.IsZero() || !g.Since.Equal(w.Since) {
			t.Errorf("cell %d: Since %v, want %v", i, g.Since, w.Since)
		}
	}
}

func TestRowRoundTrip(t *testing.T) {
	created := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	long := []byte(`"` + strings.Repeat("x", 200) + `"`)     // a two-byte length
	longer := []byte(`"` + strings.Repeat("y", 20000) + `"`) // a three-byte length
	tests := []struct {
		name  string
		cells []Cell
		size  int // the Row's length
	}{
		{"configmap", []Cell{{JSON: []byte(`"cm-1"`)}, {JSON: []byte(`3`)}, {Since: created}}, 1 + 1 + 6 + 1 + 1 + 1 + 1 + 5},
		{"unknown age", []Cell{{}}, 1},
		{"empty JSON is not a clock cell", []Cell{{JSON: []byte{}}}, 2},
		{"string with age", []Cell{{JSON: []byte(`"2"`), Since: created.Add(-time.Minute)}}, 1 + 1 + 3 + 5},
		{"nanoseconds", []Cell{{Since: created.Add(123456789)}}, 1 + 5 + 4},
		{"before 1970", []Cell{{Since: time.Date(1900, 1, 1, 0, 0, 0, 1, time.UTC)}}, 1 + 5 + 1},
		{"year 9999", []Cell{{Since: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)}}, 1 + 5 + 5},
		{"year 1 plus a second", []Cell{{Since: time.Time{}.Add(time.Second)}}, 1 + 6},
		{"year 40000", []Cell{{Since: time.Date(40000, 1, 1, 0, 0, 0, 0, time.UTC)}}, 1 + 6},
		{"other location", []Cell{{Since: created.In(time.FixedZone("x", 3600))}}, 1 + 5},
		{"long", []Cell{{JSON: long}, {JSON: longer}}, 1 + 2 + len(long) + 1 + 3 + len(longer)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := MakeRow(tt.cells)
			if len(r) != tt.size {
				t.Errorf("len = %d, want %d", len(r), tt.size)
			}
			if cap(r) != len(r) {
				t.Errorf("cap = %d, len = %d: a Row keeps no spare capacity", cap(r), len(r))
			}
			if r.Len() != len(tt.cells) {
				t.Errorf("Len = %d, want %d", r.Len(), len(tt.cells))
			}
			got := r.Cells()
			sameCells(t, got, tt.cells)
			for i, c := range got {
				if cap(c.JSON) != len(c.JSON) {
					t.Errorf("cell %d: JSON has spare capacity into the Row", i)
				}
			}
		})
	}
	if r := MakeRow(nil); r != nil || r.Len() != 0 || r.Cells() != nil {
		t.Errorf("MakeRow(nil) = %v", r)
	}
}

// TestRowAppendJSON: each kind of cell is rendered as Cell says, ages
// from the age function.
func TestRowAppendJSON(t *testing.T) {
	since := time.Date(2026, 11, 30, 10, 0, 0, 5, time.UTC)
	age := func(dst []byte, t time.Time) []byte {
		if t.IsZero() {
			return append(dst, "unknown"...)
		}
		return append(dst, t.Format(time.RFC3339Nano)...)
	}
	r := MakeRow([]Cell{{JSON: []byte(`"a"`)}, {}, {Since: since}, {JSON: []byte(`"2"`), Since: since}, {JSON: []byte(`3`), Since: since}, {JSON: []byte(`true`)}})
	want := `x["a","unknown","2026-11-30T10:00:00.000000005Z","2 (2026-11-30T10:00:00.000000005Z ago)",3,true]`
	if got := string(r.AppendJSON([]byte("x"), age)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := string(Row(nil).AppendJSON(nil, age)); got != "[]" {
		t.Errorf("empty row: %s", got)
	}
	// Cut short: the cells before the damage, still a JSON array.
	if got := string(r[:5].AppendJSON(nil, age)); got != `["a"]` {
		t.Errorf("cut row: %s", got)
	}
	for i := range len(r) {
		if got := r[:i].AppendJSON(nil, age); !json.Valid(got) {
			t.Errorf("%d bytes of %d: %s", i, len(r), got)
		}
	}
}

// TestRowMalformed: a byte string that is no Row's encoding (cut short,
// lengths past the end, nanoseconds of a second or more) reads as the
// cells before the damage, without panicking.
func TestRowMalformed(t *testing.T) {
	full := MakeRow([]Cell{{JSON: []byte(`"name"`)}, {Since: time.Unix(1700000000, 5)}})
	first := 1 + 1 + len(`"name"`)
	for i := range len(full) {
		want := 0
		if i >= first {
			want = 1
		}
		if n := full[:i].Len(); n != want {
			t.Errorf("%d bytes of %d: %d cells, want %d", i, len(full), n, want)
		}
	}
	for _, r := range []Row{
		{rowJSON, 10, '"'},                      // length past the end
		{rowJSON, 0xff, 0xff, 0xff, 0xff, 0xff}, // length cut short
		{rowSince, 0x80},                        // seconds cut short
		{rowSince, 1, 2, 3, 4},                  // fixed seconds cut short
		{rowNanos, 1},                           // nanoseconds without seconds
		binary.AppendUvarint(Row{rowWide | rowNanos, 2}, uint64(time.Second)),
	} {
		var c [1]Cell
		if n, _ := r.Decode(c[:]); n != 0 {
			t.Errorf("%v decodes as %+v", r, c[0])
		}
	}
}

// FuzzRow: any cell round-trips through a Row, and any bytes read as a
// Row without panicking.
//
//	go test -run xxx -fuzz FuzzRow -fuzztime 30s ./internal/kv/
func FuzzRow(f *testing.F) {
	f.Add([]byte(`"cm-1"`), int64(1700000000), uint32(0), false, []byte{rowJSON, 1, '1'})
	f.Add([]byte(nil), int64(-1), uint32(999999999), true, []byte{rowSince | rowNanos, 1})
	f.Fuzz(func(t *testing.T, js []byte, sec int64, nsec uint32, clock bool, junk []byte) {
		sec %= 1 << 42 // ±140,000 years: fixed and varint seconds
		c := Cell{JSON: js, Since: time.Unix(sec, int64(nsec%uint32(time.Second)))}
		if clock {
			c.JSON = nil
		} else if c.JSON == nil {
			c.JSON = []byte{}
		}
		cells := []Cell{c, {JSON: []byte(`1`)}, {}}
		r := MakeRow(cells)
		if cap(r) != len(r) {
			t.Fatalf("cap %d, len %d", cap(r), len(r))
		}
		sameCells(t, r.Cells(), cells)
		Row(junk).Cells()
		Row(junk).AppendJSON(nil, func(dst []byte, _ time.Time) []byte { return dst })
	})
}
