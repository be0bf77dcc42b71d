package api

import (
	"errors"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
)

// list serves a collection GET: the stored bytes of every matching object
// joined into a List (or a Table, or a PartialObjectMetadataList built from
// their metadata bytes), without parsing any of them. Only YAML and
// protobuf answers convert the result (see writeBody).
func (s *Server) list(w http.ResponseWriter, r *http.Request, q *request) error {
	out, err := negotiate(r, q.res)
	if err != nil {
		return err
	}
	if out.shape == shapePartial {
		return notAcceptable("you requested PartialObjectMetadata, but the requested object is a list (%s)", q.res, true)
	}
	p, err := parseListParams(r, q.res)
	if err != nil {
		return err
	}
	var tw *tableWriter
	if out.table() {
		if tw, err = s.newTableWriter(q, out, r); err != nil {
			return err
		}
	}
	min := revisionOf(p.rv)
	if p.cont != nil && p.cont.RV > 0 {
		if p.cont.expired(s.cfg.Now(), s.continueTTL()) {
			return expiredContinue(p.cont)
		}
		min = uint64(p.cont.RV)
	}
	if err := s.atLeast(r.Context(), min); err != nil {
		return err
	}
	l, err := s.listFor(r, q, p, min)
	if err != nil {
		return err
	}
	rev, after, offset, at := l.Rev, "", int64(0), s.cfg.Now().Unix()
	switch {
	case p.cont == nil:
	case p.cont.RV == inconsistentRV: // at this revision, what came before Start is not known
		after, offset = p.cont.Start, -1
	default:
		after, offset, at = p.cont.Start, p.cont.Offset, p.cont.At
	}
	each := func(fn func(*kv.Object) bool) { l.Range(after, fn) }
	var conv *convertedList // another version than the stored one's: converted pages
	if q.res.Convert != nil {
		chunk := 0 // without a limit, the whole list in one review
		if p.limit > 0 {
			chunk = int(p.limit) + 1 // a page and the object that tells whether more follow
		}
		if conv, err = newConvertedList(r.Context(), q.res, l, after, chunk); err != nil {
			return err
		}
		each = conv.Range
	}
	// A list without a limit is streamed in chunks as it is walked (its
	// metadata is known before the walk); a page is bounded by its limit
	// and built whole, as are YAML, protobuf and pretty answers.
	stream := p.limit == 0 && out.format == formatJSON && !out.pretty
	if stream {
		head, tail := listFrame(q, out, tw, rev, "", 0)
		setListHeaders(w)
		w.Write(head)
		defer w.Write(tail)
	}
	buf := getBuf()
	defer putBuf(buf)
	items, n, more := (*buf)[:0], int64(0), false
	var last *kv.Object
	each(func(obj *kv.Object) bool {
		if !p.sel.matches(obj) {
			return true
		}
		if p.limit > 0 && n == p.limit {
			more = true
			return false
		}
		switch {
		case tw != nil:
			items = tw.appendRow(items, obj, n > 0)
		case out.shape == shapePartialList:
			if n > 0 {
				items = append(items, ',')
			}
			items = appendPartial(items, obj, out.metaAPIVersion())
		default:
			if n > 0 {
				items = append(items, ',')
			}
			items = listItem(items, obj, q.res)
		}
		n++
		last = obj
		if stream && len(items) >= streamChunk {
			w.Write(items)
			items = items[:0]
		}
		return true
	})
	*buf = items
	if conv != nil && conv.err != nil {
		return conv.err
	}
	if stream {
		w.Write(items)
		return nil
	}
	cont, remaining := "", int64(0)
	if more {
		served := offset + n
		if offset < 0 {
			served = int64(l.Len()) - countAfter(l, last.Key, q.namespace)
		}
		cont = encodeContinue(rev, last, q.namespace, served, at)
		remaining = remainingItems(l, p.sel.everything(), served, last.Key, q.namespace)
	}
	head, tail := listFrame(q, out, tw, rev, cont, remaining)
	if out.format != formatJSON || out.pretty {
		body := make([]byte, 0, len(head)+len(items)+len(tail))
		body = append(append(append(body, head...), items...), tail...)
		return s.writeBody(w, out, q.res, body[:len(body)-1], true) // without the newline
	}
	setListHeaders(w)
	w.Write(head)
	w.Write(items)
	w.Write(tail)
	return nil
}

// streamChunk is how much of a streamed list is written at a time.
const streamChunk = 64 << 10

func setListHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache, private")
}

// listFrame returns what comes before and after the items of a list.
func listFrame(q *request, out output, tw *tableWriter, rev uint64, cont string, remaining int64) (head, tail []byte) {
	head, tail = make([]byte, 0, 1024), listTrailer
	switch {
	case tw != nil:
		head = tw.appendHeader(head, rev, cont, remaining, true)
	case out.shape == shapePartialList:
		head = appendPartialListHeader(head, out.metaAPIVersion(), rev, cont, remaining)
	case !hasProtobuf(q.res):
		head, tail = appendCustomListParts(head, q.res, rev, cont, remaining)
	default:
		head = appendListHeader(head, q.res, rev, cont, remaining)
	}
	return head, tail
}

// listTrailer closes a List, Table or PartialObjectMetadataList.
var listTrailer = []byte("]}\n")

func appendListHeader(b []byte, res *registry.Resource, rev uint64, cont string, remaining int64) []byte {
	b = append(b, `{"kind":"`...)
	b = append(b, res.Kind...)
	b = append(b, `List","apiVersion":"`...)
	b = append(b, res.GroupVersion()...)
	b = appendListMeta(append(b, `","metadata":`...), rev, cont, remaining)
	return append(b, `,"items":[`...)
}

// appendCustomListParts returns the head and the trailer of a custom
// resource's List, whose keys kube sorts: apiVersion, items, kind, metadata
// (with "continue" always present).
func appendCustomListParts(b []byte, res *registry.Resource, rev uint64, cont string, remaining int64) (head, tail []byte) {
	b = append(b, `{"apiVersion":"`...)
	b = append(b, res.GroupVersion()...)
	head = append(b, `","items":[`...)
	t := append(make([]byte, 0, 128), `],"kind":"`...)
	t = append(t, res.Kind...)
	t = append(t, `List","metadata":{"continue":"`...)
	t = append(t, cont...)
	t = append(t, '"')
	if cont != "" && remaining >= 0 {
		t = append(t, `,"remainingItemCount":`...)
		t = strconv.AppendInt(t, remaining, 10)
	}
	t = append(t, `,"resourceVersion":"`...)
	t = strconv.AppendUint(t, rev, 10)
	return head, append(t, "\"}}\n"...)
}

// listFor returns the view a list is served from: the current state
// (consistent unless a resourceVersion was given), or the state at the
// revision of a continue token or an exact resourceVersion, which this
// member keeps for a while after a reader took it (410 when it no longer
// does).
func (s *Server) listFor(r *http.Request, q *request, p *listParams, min uint64) (*kv.List, error) {
	if (p.cont == nil || p.cont.RV == inconsistentRV) && !p.exact {
		l, err := s.store.List(r.Context(), q.res.StoreKey(), q.namespace, p.rv == "")
		return l, availabilityErr(err)
	}
	l, err := s.store.ListAt(r.Context(), q.res.StoreKey(), q.namespace, min)
	switch {
	case errors.Is(err, kv.ErrExpired) && p.cont != nil:
		return nil, expiredContinue(p.cont)
	case errors.Is(err, kv.ErrExpired):
		return nil, apierrors.NewResourceExpired("The resourceVersion for the provided list is too old.")
	}
	return l, availabilityErr(err)
}

type listParams struct {
	rv    string
	exact bool // resourceVersionMatch=Exact
	limit int64
	cont  *continueToken
	sel   *selector
}

func parseListParams(r *http.Request, res *registry.Resource) (*listParams, error) {
	qv := r.URL.Query()
	p := &listParams{}
	var err error
	if p.rv, err = parseRV(qv.Get("resourceVersion")); err != nil {
		return nil, err
	}
	rvm := field.NewPath("resourceVersionMatch")
	switch m := qv.Get("resourceVersionMatch"); {
	case m != "" && p.rv == "":
		return nil, invalidListOptions(field.Forbidden(rvm, "resourceVersionMatch is forbidden unless resourceVersion is provided"))
	case m == "" || m == "NotOlderThan":
	case m == "Exact" && p.rv == "0":
		return nil, invalidListOptions(field.Forbidden(rvm, `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`))
	case m == "Exact":
		p.exact = true
	default:
		return nil, invalidListOptions(field.NotSupported(rvm, m, []string{"Exact", "NotOlderThan"}))
	}
	if qv.Get("sendInitialEvents") != "" {
		return nil, invalidListOptions(field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for list"))
	}
	if ls := qv.Get("limit"); ls != "" {
		if p.limit, err = strconv.ParseInt(ls, 10, 64); err != nil || p.limit < 0 {
			return nil, badRequest("invalid limit %q", ls)
		}
	}
	if c := qv.Get("continue"); c != "" {
		if qv.Get("resourceVersionMatch") != "" {
			return nil, invalidListOptions(field.Forbidden(rvm, "resourceVersionMatch is forbidden when continue is provided"))
		}
		if p.cont, err = decodeContinue(c); err != nil {
			return nil, err
		}
		if p.rv != "" && p.rv != "0" { // kube's storage.ValidateListOptions
			return nil, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
	}
	p.sel, err = parseSelector(qv, res)
	return p, err
}

// invalidListOptions is the 422 kube answers for inconsistent list options.
func invalidListOptions(e *field.Error) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}, "", field.ErrorList{e})
}

// remainingItems is a page's remainingItemCount: the objects of l after
// the first served ones, -1 (not set) when a selector filters the list, as
// kube-apiserver does (it cannot count what matches without reading it).
func remainingItems(l *kv.List, everything bool, served int64, last kv.Key, namespace string) int64 {
	if !everything {
		return -1
	}
	if r := int64(l.Len()) - served; r > 0 {
		return r
	}
	return countAfter(l, last, namespace) // a token whose offset does not fit this list (made by hand)
}

// countAfter returns the number of objects of l after last.
func countAfter(l *kv.List, last kv.Key, namespace string) int64 {
	r := int64(0)
	l.Range(continueStart(last, namespace), func(*kv.Object) bool { r++; return true })
	return r
}
