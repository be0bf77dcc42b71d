package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/litek8s/litek8s/internal/api/table"
	"github.com/litek8s/litek8s/internal/kv"
)

// tableWriter writes meta.k8s.io Tables straight into a buffer: cells come
// from the apply-time index (kv.Derived.Cells), row objects from the raw
// bytes of the stored metadata.
type tableWriter struct {
	printer    *table.Printer
	apiVersion string // meta.k8s.io/v1 or meta.k8s.io/v1beta1
	include    string // Metadata (default), Object or None
	now        time.Time
}

func (s *Server) newTableWriter(q *request, out output, r *http.Request) *tableWriter {
	inc := r.URL.Query().Get("includeObject")
	if inc == "" {
		inc = "Metadata"
	}
	return &tableWriter{printer: table.Lookup(q.res.storeKey()), apiVersion: "meta.k8s.io/" + out.tableVersion,
		include: inc, now: s.cfg.Now()}
}

// appendHeader opens a Table up to the rows array. columns=false writes
// "columnDefinitions":null (later events of a Table watch).
func (t *tableWriter) appendHeader(b []byte, rev uint64, cont string, remaining int64, columns bool) []byte {
	b = append(b, `{"kind":"Table","apiVersion":"`...)
	b = append(b, t.apiVersion...)
	b = appendListMeta(append(b, `","metadata":`...), rev, cont, remaining)
	b = append(b, `,"columnDefinitions":`...)
	if columns {
		b = t.printer.AppendColumnDefinitions(b)
	} else {
		b = append(b, "null"...)
	}
	return append(b, `,"rows":[`...)
}

// appendRow appends one row; comma tells whether a row precedes it.
func (t *tableWriter) appendRow(b []byte, obj *kv.Object, comma bool) []byte {
	if comma {
		b = append(b, ',')
	}
	b = table.AppendCells(append(b, `{"cells":`...), obj.Cells, t.now)
	b = append(b, `,"object":`...)
	switch {
	case t.include == "None":
		b = append(b, "null"...)
	case t.include == "Object":
		b = append(b, obj.Raw...)
	case obj.MetaEnd > obj.MetaStart:
		b = append(b, `{"kind":"PartialObjectMetadata","apiVersion":"`...)
		b = append(b, t.apiVersion...)
		b = append(b, `","metadata":`...)
		b = append(b, obj.Raw[obj.MetaStart:obj.MetaEnd]...)
		b = append(b, '}')
	default:
		b = append(b, "null"...)
	}
	return append(b, '}')
}

func (t *tableWriter) appendTrailer(b []byte) []byte { return append(b, "]}"...) }

// appendListMeta appends {"resourceVersion":"N"[,"continue":…,"remainingItemCount":N]}.
func appendListMeta(b []byte, rev uint64, cont string, remaining int64) []byte {
	b = append(b, `{"resourceVersion":"`...)
	b = strconv.AppendUint(b, rev, 10)
	b = append(b, '"')
	if cont != "" {
		b = append(b, `,"continue":"`...)
		b = append(b, cont...)
		b = append(b, `","remainingItemCount":`...)
		b = strconv.AppendInt(b, remaining, 10)
	}
	return append(b, '}')
}
