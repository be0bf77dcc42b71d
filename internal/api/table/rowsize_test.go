package table

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/kv"
)

// configMapJSON is a stored ConfigMap as litek8s keeps it: a short name,
// three data keys, a creationTimestamp (the shape of bench/api_load's).
func configMapJSON(i int) []byte {
	return fmt.Appendf(nil, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm-%06d","namespace":"bench",`+
		`"uid":"6f1c2b9e-0000-4000-8000-%012d","resourceVersion":"%d","creationTimestamp":"2026-11-30T10:00:00Z",`+
		`"labels":{"shard":"s%d"}},"data":{"a":"1","b":"2","c":"3"}}`, i, i, i+10, i%10)
}

// TestConfigMapRowSize (issue 20): a ConfigMap's cells (name, data count,
// age) are one exactly sized Row of a few bytes, rendered as before and
// without allocating. Computing them allocates four times: the scan (the
// object and gjson's string of raw), the writer and the Row (a []kv.Cell
// took five).
func TestConfigMapRowSize(t *testing.T) {
	p := Lookup("configmaps")
	raw := configMapJSON(7)
	row := p.Cells(raw)
	// tag+length+`"cm-000007"`, tag+length+`3`, tag+seconds
	if want := 2 + 11 + 2 + 1 + 1 + 5; len(row) != want {
		t.Errorf("row is %d bytes, want %d", len(row), want)
	}
	if cap(row) != len(row) {
		t.Errorf("row keeps %d bytes of spare capacity", cap(row)-len(row))
	}
	now := time.Date(2026, 11, 30, 10, 5, 0, 0, time.UTC)
	if got, want := string(AppendCells(nil, row, now)), `["cm-000007",3,"5m"]`; got != want {
		t.Errorf("rendered %s, want %s", got, want)
	}
	if n := testing.AllocsPerRun(100, func() { p.Cells(raw) }); n > 4 {
		t.Errorf("Cells allocates %v times, want at most 4", n)
	}
	var dst []byte
	if n := testing.AllocsPerRun(100, func() { dst = AppendCells(dst[:0], row, now) }); n != 0 {
		t.Errorf("AppendCells allocates %v times, want 0", n)
	}
	// What the heap holds per object, size class included: 24 B for a
	// 22-byte row (a []kv.Cell held ~240 B).
	if per := heldPerObject(t, 10000); per > 32 {
		t.Errorf("%.1f B of heap held per ConfigMap's cells, want at most 32", per)
	}
}

// heldPerObject derives the cells of n ConfigMaps into kv.Derived values
// (the store's field) and returns the heap they keep per object, after a
// GC: the cost of Derived.Cells in a member's live heap, beyond the field
// itself.
func heldPerObject(tb testing.TB, n int) float64 {
	tb.Helper()
	raws := make([][]byte, n)
	for i := range raws {
		raws[i] = configMapJSON(i)
	}
	held := make([]kv.Derived, n)
	p := Lookup("configmaps")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i, raw := range raws {
		held[i].Cells = p.Cells(raw)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(held)
	runtime.KeepAlive(raws)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
}

// BenchmarkHeldCells reports the heap the cells of 10,000 ConfigMaps keep,
// per object (B/object; issue 20's memory budget):
//
//	go test -run '^$' -bench HeldCells ./internal/api/table/
func BenchmarkHeldCells(b *testing.B) {
	var per float64
	for b.Loop() {
		per = heldPerObject(b, 10000)
	}
	b.ReportMetric(per, "B/object")
}

// TestAppendRowCustom: a custom printer's row rendered at request time
// (Printer.AppendRow, no Row built) is the row its packed cells render.
func TestAppendRowCustom(t *testing.T) {
	since := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	p := NewCustom([]Column{NameColumn(), AgeColumn(), {Name: "R"}, {Name: "U"}, {Name: "N"}}, func(raw []byte) []kv.Cell {
		return []kv.Cell{{JSON: raw}, {Since: since}, {JSON: []byte(`"2"`), Since: since}, {}, {JSON: []byte(`7`), Since: since}}
	})
	now := since.Add(90 * time.Second)
	want := `["x","90s","2 (90s ago)","\u003cunknown\u003e",7]`
	if got := string(p.AppendRow(nil, []byte(`"x"`), now)); got != want {
		t.Errorf("AppendRow: %s, want %s", got, want)
	}
	if got := string(AppendCells(nil, p.Cells([]byte(`"x"`)), now)); got != want {
		t.Errorf("AppendCells of Cells: %s, want %s", got, want)
	}
	if got := string(Lookup("configmaps").AppendRow(nil, configMapJSON(1), since.Add(2*time.Hour))); got != `["cm-000001",3,"60m"]` {
		t.Errorf("built-in printer's AppendRow: %s", got)
	}
}
