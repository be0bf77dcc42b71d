package table

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"
)

// FuzzCells: every printer, fed any bytes (stored objects are valid JSON,
// but the scanner must not trust that), computes cells without panicking,
// and the row it renders is a valid JSON array with one value per column.
//
//	go test -run xxx -fuzz FuzzCells -fuzztime 30s ./internal/api/table/
func FuzzCells(f *testing.F) {
	for _, s := range []string{
		`{"kind":"Pod","metadata":{"name":"p","creationTimestamp":"2024-05-01T10:00:00Z"},"spec":{"containers":[{"name":"c"}]},"status":{"phase":"Running","containerStatuses":[{"ready":true,"restartCount":2,"lastState":{"terminated":{"finishedAt":"2024-05-01T10:01:00Z"}}}]}}`,
		`{"metadata":{"name":"d"},"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"a","image":"x"}]}},"selector":{"matchLabels":{"a":"b"}}},"status":{"readyReplicas":1}}`,
		`{"metadata":{"name":"s","creationTimestamp":"bad"},"spec":{"type":"ClusterIP","clusterIP":"10.0.0.1","ports":[{"port":80,"protocol":"TCP"}]}}`,
		`{"metadata":{"name":"\u2028\"<>&"},"data":{"a":"b"}}`,
		`{"metadata"`, `[]`, `null`, `{"status":{"conditions":[{"type":"Ready","status":"True"}]}}`,
	} {
		f.Add([]byte(s), uint8(0))
	}
	names := slices.Sorted(maps.Keys(printers))
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, raw []byte, which uint8) {
		p := defaultPrinter
		if i := int(which); i < len(names) {
			p = printers[names[i]]
		}
		cells := p.Cells(raw)
		row := AppendCells(nil, cells, now)
		var vals []any
		if err := json.Unmarshal(row, &vals); err != nil {
			t.Fatalf("%v: row %q for %q is not JSON: %v", names, row, raw, err)
		}
		if len(vals) != len(p.Columns) {
			t.Fatalf("row %q has %d cells for %d columns", row, len(vals), len(p.Columns))
		}
	})
}
