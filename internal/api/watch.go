package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
)

// listOptionsKind names ListOptions in 422s about watch parameters.
var listOptionsKind = schema.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}

// errNotAcceptableStream is kube's 406 for a watch in a format that has no
// stream encoding (YAML).
var errNotAcceptableStream = statusErr(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
	"only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch", nil)

// defaultBookmarkInterval is how often kube's watch cache sends a watcher
// that allows bookmarks a BOOKMARK (Config.BookmarkInterval overrides it).
const defaultBookmarkInterval = time.Minute

// watch streams changes of a collection from the local change feed as
// {"type":…,"object":…} lines (the stored objects, one-row Tables or
// PartialObjectMetadata), or as protobuf frames for protobuf-only clients,
// without parsing objects on the JSON paths.
//
// With allowWatchBookmarks=true it also sends BOOKMARK events, like kube's
// watch cache: every Config.BookmarkInterval and once 2 s before the
// timeoutSeconds deadline, carrying only kind, apiVersion and
// metadata.resourceVersion (the revision this member has applied, once every
// event up to it has been written). They are shaped like the other events:
// a one-row Table in a Table watch (kube converts the empty bookmark object
// too, its row showing empty cells; kubectl never asks for bookmarks), a
// PartialObjectMetadata in a metadata watch.
func (s *Server) watch(w http.ResponseWriter, r *http.Request, q *request) error {
	out, err := negotiate(r, q.res)
	if err != nil {
		return err
	}
	switch {
	case out.format == formatYAML: // kube has no YAML stream serializer
		return errNotAcceptableStream
	case out.shape == shapePartialList:
		// kube cannot turn a watch event into a list: it logs and sends the
		// object itself.
		out.shape = shapeObject
		if out.format == formatProtobuf && !hasProtobuf(q.res) {
			return errNotAcceptableStream
		}
	}
	qv := r.URL.Query()
	p, err := parseWatchParams(qv, q.res)
	if err != nil {
		return err
	}
	ww := &watchWriter{s: s, w: w, q: q, out: out, sel: p.sel, bookmarks: p.bookmarks,
		events: s.metrics.watchEventsOf(q.res)}
	if out.table() {
		if ww.table, err = s.newTableWriter(q, out, r); err != nil {
			return err
		}
	}
	if p.timeout == 0 { // kube: a random time between MinRequestTimeout and twice it
		p.timeout = s.watchTimeout()
	}
	ctx, cancel := context.WithTimeout(r.Context(), p.timeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	ww.rc, ww.end = http.NewResponseController(w), deadline.Add(timeoutWriteGrace)
	ww.rc.SetWriteDeadline(ww.end)
	defer ww.rc.SetWriteDeadline(time.Time{}) // net/http keeps it for the connection's next request
	rev := revisionOf(p.rv)
	// resourceVersion unset or "0", or a watch-list: start with the current
	// state as ADDED events, then follow from its revision.
	var snapshot *kv.List
	if p.initialEvents() {
		if err := s.atLeast(ctx, rev); err != nil {
			return err
		}
		if snapshot, err = s.store.List(ctx, q.res.StoreKey(), q.namespace, p.rv == ""); err != nil {
			return availabilityErr(err)
		}
		rev = snapshot.Rev
		if q.res.Convert != nil {
			conv, err := newConvertedList(ctx, q.res, snapshot, "", 0)
			if err != nil {
				return err
			}
			ww.initial = conv.Range
		}
	} else if p.rv == "" { // sendInitialEvents=false: from now on
		rev = s.store.Revision()
	}
	watcher, err := s.store.Watch(q.res.StoreKey(), q.namespace, rev)
	ww.start()
	if errors.Is(err, kv.ErrExpired) {
		msg := fmt.Sprintf("too old resource version: %d", rev)
		if ee := (*kv.ExpiredError)(nil); errors.As(err, &ee) {
			msg = fmt.Sprintf("too old resource version: %d (%d)", rev, ee.Oldest)
		}
		return ww.expired(msg)
	}
	if err != nil {
		return ww.fail(availabilityErr(err))
	}
	defer watcher.Stop()
	ww.seen = rev
	if snapshot != nil {
		if ww.initial == nil {
			ww.initial = func(fn func(*kv.Object) bool) { snapshot.Range("", fn) }
		}
		ww.initial(func(obj *kv.Object) bool {
			if ww.sel.matches(obj) {
				ww.event("ADDED", obj)
			}
			return true
		})
		if p.sendInitialEvents && p.bookmarks {
			ww.bookmark(rev, true)
		}
	}
	ww.flush()
	return ww.follow(ctx, watcher, deadline)
}

// watchParams are a watch's query parameters.
type watchParams struct {
	rv                string
	sel               *selector
	bookmarks         bool // allowWatchBookmarks
	sendInitialEvents bool // sendInitialEvents=true (a watch-list)
	initialSet        bool // sendInitialEvents was given
	timeout           time.Duration
}

// initialEvents tells whether the watch starts with the current state: a
// watch-list, or a legacy watch from resourceVersion "" or "0".
func (p *watchParams) initialEvents() bool {
	if p.initialSet {
		return p.sendInitialEvents
	}
	return p.rv == "" || p.rv == "0"
}

// parseWatchParams reads and validates a watch's parameters as kube's
// ListOptions validation does for watches.
func parseWatchParams(qv url.Values, res *registry.Resource) (*watchParams, error) {
	p := &watchParams{}
	var err error
	if p.rv, err = parseRV(qv.Get("resourceVersion")); err != nil {
		return nil, err
	}
	if p.sel, err = parseSelector(qv, res); err != nil {
		return nil, err
	}
	p.bookmarks = queryBool(qv, "allowWatchBookmarks")
	_, p.initialSet = qv["sendInitialEvents"]
	p.sendInitialEvents = queryBool(qv, "sendInitialEvents")
	rvm, match := field.NewPath("resourceVersionMatch"), qv.Get("resourceVersionMatch")
	var errs field.ErrorList
	if p.initialSet && match != string(metav1.ResourceVersionMatchNotOlderThan) {
		errs = append(errs, field.Forbidden(rvm, "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
	}
	if match != "" {
		if !p.initialSet {
			errs = append(errs, field.Forbidden(rvm, "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
		}
		if match != string(metav1.ResourceVersionMatchNotOlderThan) {
			errs = append(errs, field.NotSupported(rvm, match, []string{string(metav1.ResourceVersionMatchNotOlderThan)}))
		}
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(listOptionsKind, "", errs)
	}
	if t := qv.Get("timeoutSeconds"); t != "" {
		secs, err := strconv.ParseInt(t, 10, 64)
		if err != nil || secs < 0 {
			return nil, badRequest("invalid timeoutSeconds %q", t)
		}
		p.timeout = time.Duration(secs) * time.Second
	}
	return p, nil
}

// queryBool reads a boolean query parameter the way kube's parameter codec
// does: present and neither "0" nor "false".
func queryBool(qv url.Values, name string) bool {
	v, ok := qv[name]
	if !ok || len(v) == 0 {
		return false
	}
	return v[0] != "0" && !strings.EqualFold(v[0], "false")
}

// watchWriter writes the events of one watch to its client. Only the
// watch's goroutine uses it.
type watchWriter struct {
	s         *Server
	w         http.ResponseWriter
	q         *request
	out       output
	sel       *selector
	table     *tableWriter
	bookmarks bool
	buf       []byte // events not yet written
	scratch   []byte // an event's object before protobuf encoding
	columns   bool   // column definitions were sent (Table watches)
	seen      uint64 // the revision every event up to which was sent
	// initial walks the initial events' objects (converted ones for a
	// converted version); nil without initial events.
	initial func(fn func(*kv.Object) bool)
	// events counts the events sent (apiserver_watch_events_total; nil
	// without metrics).
	events prometheus.Counter
	// rc sets the connection's write deadline: end (the watch's deadline
	// and a grace) between writes, and at most watchStallTimeout from the
	// start of each write, so that a client that stops reading cannot hold
	// the watch's goroutine and buffers (the store ends its feed as soon as
	// its buffer is full).
	rc  *http.ResponseController
	end time.Time
}

// watchStallTimeout is how long one write of a watch may block on a
// client that does not read before the watch is cut.
const watchStallTimeout = time.Minute

func (ww *watchWriter) start() {
	h := ww.w.Header()
	if ww.out.format == formatProtobuf {
		h.Set("Content-Type", mediaProtobuf+";stream=watch")
	} else {
		h.Set("Content-Type", mediaJSON)
	}
	h.Set("Cache-Control", "no-cache, private")
	ww.w.WriteHeader(http.StatusOK)
	ww.flush()
}

// follow streams the feed's events (and bookmarks) until the watch ends.
func (ww *watchWriter) follow(ctx context.Context, watcher kv.Watcher, deadline time.Time) error {
	interval := ww.s.cfg.BookmarkInterval
	if interval <= 0 {
		interval = defaultBookmarkInterval
	}
	var tick <-chan time.Time
	var timer *time.Timer
	if ww.bookmarks {
		if d, ok := nextBookmark(time.Now(), interval, deadline); ok {
			timer = time.NewTimer(d)
			defer timer.Stop()
			tick = timer.C
		}
	}
	var evs []kv.Event
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-watcher.Ready():
			var open bool
			evs, open = watcher.Take(evs[:0])
			if err := ww.changes(ctx, evs); err != nil {
				return ww.fail(err)
			}
			if len(evs) > 0 {
				if err := ww.flush(); err != nil {
					return nil
				}
			}
			if !open {
				return ww.ended(watcher)
			}
		case <-tick:
			// The store's revision covers every event up to it only once
			// they are all taken (they were queued before the revision
			// was published); with events waiting, they go first.
			rev := ww.s.store.Revision()
			var open bool
			if evs, open = watcher.Take(evs[:0]); len(evs) > 0 || !open {
				if err := ww.changes(ctx, evs); err != nil {
					return ww.fail(err)
				}
				if !open {
					if err := ww.flush(); err != nil {
						return nil
					}
					return ww.ended(watcher)
				}
				timer.Reset(0)
				continue
			}
			ww.bookmark(max(rev, ww.seen), false)
			if err := ww.flush(); err != nil {
				return nil
			}
			d, ok := nextBookmark(time.Now(), interval, deadline)
			if !ok {
				tick = nil
				continue
			}
			timer.Reset(d)
		}
	}
}

// changes writes evs (see change) and lets go of their objects.
func (ww *watchWriter) changes(ctx context.Context, evs []kv.Event) error {
	defer clear(evs)
	for _, ev := range evs {
		if err := ww.change(ctx, ev); err != nil {
			return err
		}
	}
	return nil
}

// nextBookmark is when kube's watch cache sends the next bookmark: after
// interval, or 2 s before the watch's deadline if that is sooner; none
// once that moment has passed.
func nextBookmark(now time.Time, interval time.Duration, deadline time.Time) (time.Duration, bool) {
	next := now.Add(interval)
	if !deadline.IsZero() {
		if pre := deadline.Add(-2 * time.Second); pre.Before(next) {
			next = pre
		}
	}
	if next.Before(now) {
		return 0, false
	}
	return next.Sub(now), true
}

// ended reports why the feed closed the watch.
func (ww *watchWriter) ended(watcher kv.Watcher) error {
	if errors.Is(watcher.Err(), kv.ErrExpired) {
		return ww.expired("the watch fell behind the change feed; relist")
	}
	return nil
}

// change writes ev as the client sees it through its selector: an object
// that stops matching is DELETED, one that starts matching is ADDED.
// An event of a converted version (crd_convert.go) is converted first; a
// failed conversion ends the watch.
func (ww *watchWriter) change(ctx context.Context, ev kv.Event) error {
	ww.seen = max(ww.seen, ev.Object.RV)
	if ww.q.res.Convert != nil {
		var err error
		if ev.Object, err = convertObject(ctx, ww.q.res, ev.Object); err != nil {
			return err
		}
		if ev.Prev != nil && !ww.sel.everything() && ev.Type != kv.Deleted {
			if ev.Prev, err = convertObject(ctx, ww.q.res, ev.Prev); err != nil {
				return err
			}
		}
	}
	now := ww.sel.matches(ev.Object)
	if ww.sel.everything() || ev.Prev == nil || ev.Type == kv.Deleted {
		if now {
			ww.event(ev.Type.String(), ev.Object)
		}
		return nil
	}
	was := ww.sel.matches(ev.Prev)
	switch {
	case was && now:
		ww.event("MODIFIED", ev.Object)
	case now:
		ww.event("ADDED", ev.Object)
	case was:
		ww.event("DELETED", ev.Object)
	}
	return nil
}

// event writes one event of type typ about obj.
func (ww *watchWriter) event(typ string, obj *kv.Object) {
	ww.eventWith(typ, obj, ww.table)
}

func (ww *watchWriter) eventWith(typ string, obj *kv.Object, tw *tableWriter) {
	if ww.out.format == formatProtobuf {
		ww.scratch = ww.appendObject(ww.scratch[:0], obj, tw)
		o, err := protoWatchObject(ww.scratch, ww.q.res, ww.out)
		if err == nil {
			ww.buf, err = ww.s.appendProtoWatchEvent(ww.buf, typ, o)
		}
		if err != nil {
			ww.s.log.Error("protobuf watch event", "resource", ww.q.res.StoreKey(), "err", err)
		}
	} else {
		b := append(ww.buf, `{"type":"`...)
		b = append(b, typ...)
		b = append(b, `","object":`...)
		b = ww.appendObject(b, obj, tw)
		ww.buf = append(b, "}\n"...)
	}
	if ww.events != nil {
		ww.events.Inc()
	}
	if len(ww.buf) > 256<<10 {
		ww.flush()
	}
}

// appendObject appends the JSON object of an event about obj: the stored
// bytes, its PartialObjectMetadata or a one-row Table (the first with the
// column definitions, later ones with "columnDefinitions":null).
func (ww *watchWriter) appendObject(b []byte, obj *kv.Object, tw *tableWriter) []byte {
	switch {
	case tw != nil:
		tw.now = ww.s.cfg.Now() // ages as of this event, not of the watch's start
		b = tw.appendHeader(b, obj.RV, "", 0, !ww.columns)
		ww.columns = true
		return tw.appendTrailer(tw.appendRow(b, obj, false))
	case ww.out.shape == shapePartial:
		return appendPartial(b, obj, ww.out.metaAPIVersion())
	}
	return append(b, served(ww.q.res, obj.Raw)...)
}

// bookmark sends a BOOKMARK at revision rev; initialEnd marks the end of a
// watch-list's initial events (annotation k8s.io/initial-events-end).
func (ww *watchWriter) bookmark(rev uint64, initialEnd bool) {
	obj := bookmarkObject(ww.q.res, rev, initialEnd)
	tw := ww.table
	if tw != nil {
		if !tw.custom {
			obj.Cells = tw.printer.Cells(obj.Raw)
		}
		if initialEnd && tw.include == "None" { // kube keeps the annotation visible
			t := *tw
			t.include = "Metadata"
			tw = &t
		}
	}
	ww.eventWith("BOOKMARK", obj, tw)
}

func (ww *watchWriter) flush() error {
	if ww.rc == nil { // before the watch's deadline is known
		ww.rc = http.NewResponseController(ww.w)
	}
	if !ww.end.IsZero() {
		stall := time.Now().Add(watchStallTimeout)
		if ww.end.Before(stall) {
			stall = ww.end
		}
		ww.rc.SetWriteDeadline(stall)
		defer ww.rc.SetWriteDeadline(ww.end)
	}
	if len(ww.buf) > 0 {
		_, err := ww.w.Write(ww.buf)
		ww.buf = ww.buf[:0]
		if err != nil {
			return err
		}
	}
	return ww.rc.Flush()
}

// expired ends the stream with an ERROR event holding a 410 Expired Status.
func (ww *watchWriter) expired(msg string) error {
	return ww.fail(apierrors.NewResourceExpired(msg))
}

func (ww *watchWriter) fail(err error) error {
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		se = apierrors.NewInternalError(err)
	}
	st := se.Status()
	st.Kind, st.APIVersion = "Status", "v1"
	if ww.out.format == formatProtobuf {
		if ww.buf, err = ww.s.appendProtoWatchEvent(ww.buf, "ERROR", &st); err != nil {
			ww.s.log.Error("protobuf watch error event", "err", err)
		}
	} else {
		obj, _ := json.Marshal(&st)
		ww.buf = append(ww.buf, `{"type":"ERROR","object":`...)
		ww.buf = append(append(ww.buf, obj...), "}\n"...)
	}
	ww.flush()
	return nil
}
