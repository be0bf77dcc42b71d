package api

import (
	"net/http"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/api/table"
	"github.com/litek8s/litek8s/internal/kv"
)

// tableWriter writes meta.k8s.io Tables straight into a buffer: cells come
// from the apply-time index (kv.Derived.Cells), row objects from the raw
// bytes of the stored metadata. A resource with a printer of its own
// (custom resources: their printer columns) has its cells computed at
// request time instead.
type tableWriter struct {
	printer    *table.Printer
	custom     bool   // cells are computed at request time (printer.AppendRow)
	apiVersion string // meta.k8s.io/v1 or meta.k8s.io/v1beta1
	include    string // Metadata (default), Object or None
	now        time.Time
	res        *registry.Resource
}

// newTableWriter validates the Table options (includeObject) as kube
// does and returns the writer of q's Tables.
func (s *Server) newTableWriter(q *request, out output, r *http.Request) (*tableWriter, error) {
	inc := r.URL.Query().Get("includeObject")
	switch inc {
	case "":
		inc = "Metadata"
	case "Metadata", "Object", "None":
	default:
		return nil, badRequest("Unable to convert to Table as requested: %v", field.Invalid(field.NewPath("includeObject"),
			inc, "must be 'Metadata', 'Object', 'None', or empty").Error())
	}
	tw := &tableWriter{printer: q.res.Printer, custom: q.res.Printer != nil, apiVersion: out.metaAPIVersion(),
		include: inc, now: s.cfg.Now(), res: q.res}
	if tw.printer == nil {
		tw.printer = table.Lookup(q.res.StoreKey())
	}
	return tw, nil
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
	if t.custom {
		b = t.printer.AppendRow(append(b, `{"cells":`...), obj.Raw, t.now)
	} else {
		b = table.AppendCells(append(b, `{"cells":`...), obj.Cells, t.now)
	}
	b = append(b, `,"object":`...)
	switch t.include {
	case "None":
		b = append(b, "null"...)
	case "Object":
		b = append(b, served(t.res, obj.Raw)...)
	default:
		b = appendPartial(b, obj, t.apiVersion)
	}
	return append(b, '}')
}

func (t *tableWriter) appendTrailer(b []byte) []byte { return append(b, "]}"...) }

// appendListMeta appends {"resourceVersion":"N"[,"continue":…[,"remainingItemCount":N]]}
// (remaining < 0: not known).
func appendListMeta(b []byte, rev uint64, cont string, remaining int64) []byte {
	b = append(b, `{"resourceVersion":"`...)
	b = strconv.AppendUint(b, rev, 10)
	b = append(b, '"')
	if cont != "" {
		b = append(b, `,"continue":"`...)
		b = append(b, cont...)
		b = append(b, '"')
		if remaining >= 0 {
			b = append(b, `,"remainingItemCount":`...)
			b = strconv.AppendInt(b, remaining, 10)
		}
	}
	return append(b, '}')
}
