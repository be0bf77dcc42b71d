package table

import (
	"strconv"
	"time"

	"github.com/tidwall/gjson"

	"github.com/litek8s/litek8s/internal/kv"
)

// maxCells bounds the columns of a printer, so that a rowWriter keeps its
// cell offsets in fixed arrays: building a row allocates only the writer
// (its JSON fits its scratch array unless a row is long) and the Row.
const maxCells = 12

// rowWriter builds the cells of one row. Cell JSON is appended to buf;
// done packs the cells into one exactly sized kv.Row.
type rowWriter struct {
	buf   []byte
	n     int                 // cells written
	ends  [maxCells]int       // ends[i] is the end of cell i's JSON in buf
	since [maxCells]time.Time // since[i] is cell i's Since
	start int                 // start of the cell being written
	// scratch is buf's first backing array: rows are short, and the Row
	// is copied out of it, so the writer is the only other allocation.
	scratch [192]byte
}

// reset makes w empty, writing into its scratch array. w must not move
// afterwards (rowWriter is used through a pointer).
func (w *rowWriter) reset() {
	w.buf, w.n, w.start = w.scratch[:0], 0, 0
}

// str writes a string cell.
func (w *rowWriter) str(s string) {
	w.begin()
	w.text(s)
	w.end()
}

// strOr writes s, or def when s is empty.
func (w *rowWriter) strOr(s, def string) {
	if s == "" {
		s = def
	}
	w.str(s)
}

// optional writes the string v (empty included), or def when v is null or
// absent: an optional string field printed as kube prints a nil pointer.
func (w *rowWriter) optional(v gjson.Result, def string) {
	if v.Type == gjson.Null {
		w.str(def)
		return
	}
	w.str(v.String())
}

// num writes a number cell.
func (w *rowWriter) num(n int64) {
	w.start = len(w.buf)
	w.buf = strconv.AppendInt(w.buf, n, 10)
	w.add(time.Time{})
}

// boolean writes a JSON boolean cell.
func (w *rowWriter) boolean(b bool) {
	w.start = len(w.buf)
	w.buf = strconv.AppendBool(w.buf, b)
	w.add(time.Time{})
}

// duration writes a string cell with d as kubectl shows ages ("5m30s").
func (w *rowWriter) duration(d time.Duration) {
	w.begin()
	w.buf = appendHumanDuration(w.buf, d)
	w.end()
}

// ageOr writes a clock cell with the age of t, or the string def when t is
// zero.
func (w *rowWriter) ageOr(t time.Time, def string) {
	if t.IsZero() {
		w.str(def)
		return
	}
	w.age(t)
}

// age writes a clock cell: the age of t, rendered by AppendCells.
func (w *rowWriter) age(t time.Time) {
	w.start = len(w.buf)
	w.add(t)
}

// ratio writes a string cell "a/b".
func (w *rowWriter) ratio(a, b int64) {
	w.begin()
	w.buf = strconv.AppendInt(w.buf, a, 10)
	w.buf = append(w.buf, '/')
	w.buf = strconv.AppendInt(w.buf, b, 10)
	w.end()
}

// begin starts a string cell whose contents are appended with text.
func (w *rowWriter) begin() {
	w.start = len(w.buf)
	w.buf = append(w.buf, '"')
}

// text appends s, escaped, to the string cell being written.
func (w *rowWriter) text(s string) { w.buf = appendEscaped(w.buf, s) }

// blank reports whether the string cell being written is still empty.
func (w *rowWriter) blank() bool { return len(w.buf) == w.start+1 }

// end finishes the string cell being written.
func (w *rowWriter) end() { w.endSince(time.Time{}) }

// endSince finishes the string cell being written; a non-zero t makes
// AppendCells add " (<age of t> ago)" to it.
func (w *rowWriter) endSince(t time.Time) {
	w.buf = append(w.buf, '"')
	w.add(t)
}

func (w *rowWriter) add(since time.Time) {
	w.ends[w.n], w.since[w.n] = len(w.buf), since
	w.n++
}

// done packs the cells into a Row; clock cells have no JSON.
func (w *rowWriter) done() kv.Row {
	var cells [maxCells]kv.Cell
	start := 0
	for i := range w.n {
		cells[i].Since = w.since[i]
		if end := w.ends[i]; end > start {
			cells[i].JSON = w.buf[start:end]
			start = end
		}
	}
	return kv.MakeRow(cells[:w.n])
}

// joinField writes a string cell joining field of every element of arr
// with ",", as kube's layoutContainerCells does.
func (w *rowWriter) joinField(arr gjson.Result, field string) {
	w.begin()
	first := true
	forEachElem(arr, func(v gjson.Result) bool {
		if !first {
			w.buf = append(w.buf, ',')
		}
		first = false
		w.text(v.Get(field).String())
		return true
	})
	w.end()
}
