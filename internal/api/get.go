package api

import (
	"net/http"
	"strconv"

	"github.com/litek8s/litek8s/internal/kv"
)

// get serves GET of one object: its stored bytes, or a one-row Table.
func (s *Server) get(w http.ResponseWriter, r *http.Request, q *request) error {
	out, err := negotiate(r.Header.Get("Accept"), true)
	if err != nil {
		return err
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
	if out.table {
		tw := s.newTableWriter(q, out, r)
		buf := getBuf()
		defer putBuf(buf)
		b := tw.appendHeader((*buf)[:0], rev, "", 0, true)
		b = tw.appendRow(b, obj, false)
		*buf = tw.appendTrailer(b)
		writeRaw(w, http.StatusOK, *buf)
		return nil
	}
	writeRaw(w, http.StatusOK, obj.Raw)
	return nil
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
func listItem(dst []byte, obj *kv.Object) []byte {
	if obj.BodyStart > 0 {
		dst = append(dst, '{')
		return append(dst, obj.Raw[obj.BodyStart:]...)
	}
	return append(dst, obj.Raw...)
}
