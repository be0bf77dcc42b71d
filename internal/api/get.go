package api

import (
	"net/http"
	"strconv"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
)

// get serves GET of one object: its stored bytes, a one-row Table or its
// PartialObjectMetadata (or those converted to YAML or protobuf when only
// these are accepted, see negotiate).
func (s *Server) get(w http.ResponseWriter, r *http.Request, q *request) error {
	out, err := negotiate(r, q.res)
	if err != nil {
		return err
	}
	if out.shape == shapePartialList {
		return notAcceptable("you requested PartialObjectMetadataList, but the requested object is not a list (%s)", q.res, false)
	}
	var tw *tableWriter
	if out.table() {
		if tw, err = s.newTableWriter(q, out, r); err != nil {
			return err
		}
	}
	rv, err := parseRV(r.URL.Query().Get("resourceVersion"))
	if err != nil {
		return err
	}
	if err := s.atLeast(r.Context(), revisionOf(rv)); err != nil {
		return err
	}
	obj, rev, err := s.store.Get(r.Context(), q.key(), rv == "")
	if err != nil {
		return storeErr(err, q.res, q.name)
	}
	if obj, err = convertObject(r.Context(), q.res, obj); err != nil {
		return err
	}
	buf := getBuf()
	defer putBuf(buf)
	body := served(q.res, obj.Raw)
	switch out.shape {
	case shapeTable:
		b := tw.appendHeader((*buf)[:0], rev, "", 0, true)
		b = tw.appendRow(b, obj, false)
		*buf = tw.appendTrailer(b)
		body = *buf
	case shapePartial:
		*buf = appendPartial((*buf)[:0], obj, out.metaAPIVersion())
		body = *buf
	}
	return s.writeBody(w, out, q.res, body, false)
}

// parseRV validates a resourceVersion parameter ("" when unset).
func parseRV(rv string) (string, error) {
	if rv == "" {
		return "", nil
	}
	if _, err := strconv.ParseUint(rv, 10, 64); err != nil {
		return "", badRequest("invalid resource version %q: %v", rv, err)
	}
	return rv, nil
}

// listItem appends obj in list-item form: built-in kinds' items carry no
// kind/apiVersion.
func listItem(dst []byte, obj *kv.Object, res *registry.Resource) []byte {
	if obj.BodyStart > 0 {
		dst = append(dst, '{')
		return append(dst, obj.Raw[obj.BodyStart:]...)
	}
	return append(dst, served(res, obj.Raw)...)
}
