package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/litek8s/litek8s/internal/kv"
)

// watch streams changes of a collection from the local change feed as
// {"type":…,"object":…} lines (or one-row Tables), without parsing objects.
func (s *Server) watch(w http.ResponseWriter, r *http.Request, q *request) error {
	out, err := negotiate(r.Header.Get("Accept"), true)
	if err != nil {
		return err
	}
	qv := r.URL.Query()
	rvs, err := parseRV(qv.Get("resourceVersion"))
	if err != nil {
		return err
	}
	sel, err := parseSelector(qv)
	if err != nil {
		return err
	}
	initial := qv.Get("sendInitialEvents") == "true"
	if initial && qv.Get("allowWatchBookmarks") != "true" {
		return badRequest("sendInitialEvents requires allowWatchBookmarks=true")
	}
	ctx := r.Context()
	if t := qv.Get("timeoutSeconds"); t != "" {
		secs, err := strconv.ParseInt(t, 10, 64)
		if err != nil || secs < 0 {
			return badRequest("invalid timeoutSeconds %q", t)
		}
		if secs > 0 {
			var cancel func()
			ctx, cancel = context.WithTimeout(ctx, time.Duration(secs)*time.Second)
			defer cancel()
		}
	}
	ww := &watchWriter{w: w, q: q, sel: sel}
	if out.table {
		ww.table = s.newTableWriter(q, out, r)
	}
	rev, _ := strconv.ParseUint(rvs, 10, 64)
	// resourceVersion unset or "0", or a watch-list: start with the current
	// state as ADDED events, then follow from its revision.
	var snapshot *kv.List
	if rvs == "" || rvs == "0" || initial {
		if snapshot, err = s.store.List(ctx, q.res.storeKey(), q.namespace, rvs == ""); err != nil {
			return availabilityErr(err)
		}
		rev = snapshot.Rev
	}
	watcher, err := s.store.Watch(q.res.storeKey(), q.namespace, rev)
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
	if snapshot != nil {
		snapshot.Range("", func(obj *kv.Object) bool {
			if sel.matches(obj) {
				ww.event("ADDED", obj)
			}
			return true
		})
		if initial {
			ww.initialEventsEnd(rev)
		}
	}
	ww.flush()
	return ww.follow(ctx, watcher)
}

// watchWriter writes watch events to one client.
type watchWriter struct {
	w       http.ResponseWriter
	q       *request
	sel     *selector
	table   *tableWriter
	buf     []byte
	columns bool // column definitions were sent (Table watches)
}

func (ww *watchWriter) start() {
	h := ww.w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache, private")
	ww.w.WriteHeader(http.StatusOK)
	ww.flush()
}

func (ww *watchWriter) follow(ctx context.Context, watcher kv.Watcher) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-watcher.Events():
			if !ok {
				if errors.Is(watcher.Err(), kv.ErrExpired) {
					return ww.expired("the watch fell behind the change feed; relist")
				}
				return nil
			}
			ww.change(ev)
			if len(watcher.Events()) == 0 {
				if err := ww.flush(); err != nil {
					return nil
				}
			}
		}
	}
}

// change writes ev as the client sees it through its selector: an object
// that stops matching is DELETED, one that starts matching is ADDED.
func (ww *watchWriter) change(ev kv.Event) {
	now := ww.sel.matches(ev.Object)
	if ww.sel.everything() || ev.Prev == nil || ev.Type == kv.Deleted {
		if now {
			ww.event(ev.Type.String(), ev.Object)
		}
		return
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
}

func (ww *watchWriter) event(typ string, obj *kv.Object) {
	b := append(ww.buf, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","object":`...)
	if ww.table != nil {
		b = ww.table.appendHeader(b, obj.RV, "", 0, !ww.columns)
		b = ww.table.appendTrailer(ww.table.appendRow(b, obj, false))
		ww.columns = true
	} else {
		b = append(b, obj.Raw...)
	}
	ww.buf = append(b, "}\n"...)
	if len(ww.buf) > 256<<10 {
		ww.flush()
	}
}

// initialEventsEnd sends the bookmark that ends a watch-list's initial events.
func (ww *watchWriter) initialEventsEnd(rev uint64) {
	res := ww.q.res
	b := append(ww.buf, `{"type":"BOOKMARK","object":{"kind":"`...)
	b = append(b, res.Kind...)
	b = append(b, `","apiVersion":"`...)
	b = append(b, res.groupVersion()...)
	b = append(b, `","metadata":{"resourceVersion":"`...)
	b = strconv.AppendUint(b, rev, 10)
	ww.buf = append(b, `","annotations":{"k8s.io/initial-events-end":"true"}}}}`+"\n"...)
}

func (ww *watchWriter) flush() error {
	if len(ww.buf) > 0 {
		_, err := ww.w.Write(ww.buf)
		ww.buf = ww.buf[:0]
		if err != nil {
			return err
		}
	}
	return http.NewResponseController(ww.w).Flush()
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
	obj, _ := json.Marshal(&st)
	ww.buf = append(ww.buf, `{"type":"ERROR","object":`...)
	ww.buf = append(append(ww.buf, obj...), "}\n"...)
	ww.flush()
	return nil
}
