package table

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/kv"
)

// TestAppendCellsDurations covers the clock cells, rendered as kube's
// translateTimestampSince does.
func TestAppendCellsDurations(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	tests := []struct {
		name string
		cell kv.Cell
		want string
	}{
		{"unknown", kv.Cell{}, `"\u003cunknown\u003e"`},
		{"seconds", kv.Cell{Since: ago(19 * time.Second)}, `"19s"`},
		{"sub-second", kv.Cell{Since: ago(19*time.Second + 900*time.Millisecond)}, `"19s"`},
		{"two minutes", kv.Cell{Since: ago(119 * time.Second)}, `"119s"`},
		{"minutes and seconds", kv.Cell{Since: ago(3*time.Minute + 29*time.Second)}, `"3m29s"`},
		{"minutes", kv.Cell{Since: ago(19 * time.Minute)}, `"19m"`},
		{"under three hours", kv.Cell{Since: ago(2*time.Hour + 5*time.Minute)}, `"125m"`},
		{"hours and minutes", kv.Cell{Since: ago(3*time.Hour + 5*time.Minute)}, `"3h5m"`},
		{"days", kv.Cell{Since: ago(3*24*time.Hour + 4*time.Hour)}, `"3d4h"`},
		{"slightly in the future", kv.Cell{Since: now.Add(time.Second)}, `"0s"`},
		{"in the future", kv.Cell{Since: now.Add(5 * time.Second)}, `"\u003cinvalid\u003e"`},
		{"precomputed", kv.Cell{JSON: []byte(`42`)}, `42`},
		{"with age", kv.Cell{JSON: []byte(`"3"`), Since: ago(5 * time.Minute)}, `"3 (5m ago)"`},
		{"non-string with since", kv.Cell{JSON: []byte(`3`), Since: ago(5 * time.Minute)}, `3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(AppendCells(nil, kv.MakeRow([]kv.Cell{tt.cell}), now)); got != "["+tt.want+"]" {
				t.Errorf("got %s, want [%s]", got, tt.want)
			}
		})
	}
	if got := string(AppendCells([]byte("x"), nil, now)); got != "x[]" {
		t.Errorf("empty row: got %s", got)
	}
}

// TestAppendString checks the string escaping against encoding/json, which
// kube-apiserver uses (HTML-safe).
func TestAppendString(t *testing.T) {
	for _, s := range []string{
		"", "plain", `quote " backslash \`, "<none> & <unknown>", "tab\tnl\nret\rbs\bff\f",
		"\x00\x01\x1f\x7f", "é ü 世界 🙂", "line\u2028para\u2029", "bad \xff utf8 \xe2\x82",
		"spec.containers{name}", "a=b,c=d",
	} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString(nil, s); string(got) != string(want) {
			t.Errorf("appendString(%q) = %s, want %s", s, got, want)
		}
		if got := appendString(nil, []byte(s)); string(got) != string(want) {
			t.Errorf("appendString([]byte(%q)) = %s, want %s", s, got, want)
		}
	}
}

// TestColumnDefinitionsAreJSON checks that every printer's column
// definitions decode back to its columns.
func TestColumnDefinitionsAreJSON(t *testing.T) {
	for name, p := range printers {
		var got []struct {
			Name, Type, Format, Description string
			Priority                        int
		}
		if err := json.Unmarshal(p.AppendColumnDefinitions(nil), &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(p.Columns) {
			t.Fatalf("%s: %d definitions for %d columns", name, len(got), len(p.Columns))
		}
		for i, c := range p.Columns {
			if Column(got[i]) != c {
				t.Errorf("%s column %d: got %+v, want %+v", name, i, got[i], c)
			}
		}
	}
}
