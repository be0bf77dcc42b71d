package table

import (
	"testing"
	"time"
)

// benchObjects are golden objects of a few kinds, from small to large.
var benchObjects = []struct{ resource, file string }{
	{"configmaps", "objects/configmap-get.json"},
	{"events", "objects/event-get.json"},
	{"nodes", "objects/node-get.json"},
	{"deployments.apps", "objects/deployment-get.json"},
	{"pods", "objects/pod-get.json"},
}

func BenchmarkCells(b *testing.B) {
	for _, bo := range benchObjects {
		b.Run(bo.resource, func(b *testing.B) {
			raw := readGolden(b, bo.file)
			p := Lookup(bo.resource)
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				p.Cells(raw)
			}
		})
	}
}

func BenchmarkAppendCells(b *testing.B) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	for _, bo := range benchObjects {
		b.Run(bo.resource, func(b *testing.B) {
			cells := Lookup(bo.resource).Cells(readGolden(b, bo.file))
			var dst []byte
			b.ReportAllocs()
			for b.Loop() {
				dst = AppendCells(dst[:0], cells, now)
			}
		})
	}
}
