package controllers

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/litek8s/litek8s/internal/kv"
)

// informer follows one resource of the local store: it lists it, then
// watches the change feed from the list's revision, and hands every change
// to handle, in revision order. When the watch ends because the informer
// fell behind the feed (kv.ErrExpired) it lists again, counts a resync and
// hands over the difference between what it knew and the new list as
// events (a Deleted for what went, an Added or Modified for the rest), as
// client-go's reflector does with a Replace.
//
// What it knew is kept without a copy of the resource: base, the store's
// immutable view it last listed (a copy-on-write B-tree that shares every
// unchanged node with the store), overlaid by changed, the keys changed
// since. Before changed grows past a fraction of base (and base holds on
// to too many replaced objects), the informer takes a newer view and
// adopts it once it has handed over every change up to that view's last
// one, so that its view is always exactly what it handed over.
//
// Concurrency: run is the informer's one goroutine; handle is called on
// it. The view and synced belong to it; after run returned, its owner may
// call each.
type informer struct {
	store    Store
	resource string
	handle   func(kv.Event)
	resyncs  *atomic.Uint64
	delay    time.Duration // before a relist after a failed watch
	log      *slog.Logger

	base    *kv.List
	baseLen int
	// changed: the objects changed since base, by key (nil: deleted).
	changed map[kv.Key]*kv.Object
	// next, when set, is a newer view to adopt as base once the changes up
	// to its ModRev were handed over.
	next *kv.List
	// pos is the revision of the last change handed over.
	pos uint64
	// minChanged: changed may hold max(minChanged, baseLen/changedFraction)
	// keys before a newer view is taken.
	minChanged int
	synced     chan struct{} // closed once the first list was handed over
}

// changedFraction bounds the keys changed since base, as a fraction of
// base, and with them the replaced objects base keeps alive.
const changedFraction = 16

func newInformer(store Store, resource string, handle func(kv.Event), resyncs *atomic.Uint64,
	delay time.Duration, log *slog.Logger) *informer {
	return &informer{store: store, resource: resource, handle: handle, resyncs: resyncs, delay: delay,
		log: log.With("resource", resource), changed: make(map[kv.Key]*kv.Object), minChanged: 1024,
		synced: make(chan struct{})}
}

// run lists and watches until ctx ends or the store closes.
func (in *informer) run(ctx context.Context) {
	first := true
	for ctx.Err() == nil {
		rev, err := in.relist(ctx)
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, kv.ErrClosed) {
				in.log.Warn("informer list failed", "err", err)
			}
			if !in.sleep(ctx) {
				return
			}
			continue
		}
		if first {
			close(in.synced)
			first = false
		}
		err = in.watch(ctx, rev)
		switch {
		case ctx.Err() != nil, errors.Is(err, kv.ErrClosed):
			return
		case errors.Is(err, kv.ErrExpired):
			in.resyncs.Add(1)
			in.log.Info("informer fell behind the change feed; listing again", "revision", rev)
		default:
			in.resyncs.Add(1)
			in.log.Warn("informer watch ended; listing again", "err", err)
			if !in.sleep(ctx) {
				return
			}
		}
	}
}

func (in *informer) sleep(ctx context.Context) bool {
	t := time.NewTimer(in.delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// relist lists the resource and hands over what changed since the view.
func (in *informer) relist(ctx context.Context) (uint64, error) {
	l, err := in.store.List(ctx, in.resource, "", false)
	if err != nil {
		return 0, err
	}
	old, cur := in.objects(), listed(l)
	// The deletions first (gone, or replaced by another incarnation), then
	// the new incarnations and the changes, in key order.
	merge(old, cur, func(o, c *kv.Object) {
		if o != nil && (c == nil || c.UID != o.UID) {
			in.handle(kv.Event{Type: kv.Deleted, Object: o, Prev: o})
		}
	})
	merge(old, cur, func(o, c *kv.Object) {
		switch {
		case c == nil:
		case o == nil || o.UID != c.UID:
			in.handle(kv.Event{Type: kv.Added, Object: c})
		case o.RV != c.RV:
			in.handle(kv.Event{Type: kv.Modified, Object: c, Prev: o})
		}
	})
	in.adopt(l)
	in.pos = l.Rev
	return l.Rev, nil
}

// watch hands over the changes after rev until the watch ends, and says
// why it ended.
func (in *informer) watch(ctx context.Context, rev uint64) error {
	w, err := in.store.Watch(in.resource, "", rev)
	if err != nil {
		return err
	}
	defer w.Stop()
	var evs []kv.Event
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.Ready():
			var open bool
			evs, open = w.Take(evs[:0])
			for _, ev := range evs {
				in.record(ctx, ev)
				in.handle(ev)
			}
			clear(evs)
			if !open {
				if err := w.Err(); err != nil {
					return err
				}
				return kv.ErrClosed // stopped by someone else: the store
			}
		}
	}
}

// record adds a change from the watch to the view, and moves the view to
// a newer base when changed grew too large.
func (in *informer) record(ctx context.Context, ev kv.Event) {
	if ev.Type == kv.Deleted {
		in.changed[ev.Object.Key] = nil
	} else {
		in.changed[ev.Object.Key] = ev.Object
	}
	in.pos = max(in.pos, ev.Object.RV)
	switch {
	case in.next != nil:
		if in.pos >= in.next.ModRev {
			in.adopt(in.next)
		}
	case len(in.changed) > max(in.minChanged, in.baseLen/changedFraction):
		l, err := in.store.List(ctx, in.resource, "", false)
		switch {
		case err != nil: // try again at the next change
		case l.ModRev <= in.pos: // nothing after what was handed over
			in.adopt(l)
		default: // changes still to come: adopt it once they came
			in.next = l
		}
	}
}

// adopt makes l the view's base, with nothing changed since.
func (in *informer) adopt(l *kv.List) {
	in.base, in.baseLen, in.next = l, l.Len(), nil
	in.changed = make(map[kv.Key]*kv.Object)
}

// objects returns the view's objects in key order.
func (in *informer) objects() []*kv.Object {
	out := make([]*kv.Object, 0, in.baseLen+len(in.changed))
	if in.base != nil {
		in.base.Range("", func(obj *kv.Object) bool {
			if _, ok := in.changed[obj.Key]; !ok {
				out = append(out, obj)
			}
			return true
		})
	}
	n := len(out)
	for _, obj := range in.changed {
		if obj != nil {
			out = append(out, obj)
		}
	}
	if len(out) > n {
		slices.SortFunc(out, func(a, b *kv.Object) int { return compareKeys(a.Key, b.Key) })
	}
	return out
}

// each calls fn for every object of the view; for the informer's owner,
// after run returned.
func (in *informer) each(fn func(*kv.Object)) {
	for _, obj := range in.objects() {
		fn(obj)
	}
}

// listed returns the objects of l in key order.
func listed(l *kv.List) []*kv.Object {
	var out []*kv.Object
	l.Range("", func(obj *kv.Object) bool {
		out = append(out, obj)
		return true
	})
	return out
}

// compareKeys orders the keys of one resource as the store's lists do:
// by namespace, then by name.
func compareKeys(a, b kv.Key) int {
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// merge walks two key-ordered object lists together, calling fn with the
// object of each key in a and in b (nil where a list does not have it).
func merge(a, b []*kv.Object, fn func(x, y *kv.Object)) {
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || len(a) > 0 && compareKeys(a[0].Key, b[0].Key) < 0:
			fn(a[0], nil)
			a = a[1:]
		case len(a) == 0 || compareKeys(a[0].Key, b[0].Key) > 0:
			fn(nil, b[0])
			b = b[1:]
		default:
			fn(a[0], b[0])
			a, b = a[1:], b[1:]
		}
	}
}
