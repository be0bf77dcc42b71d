package controllers

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/litek8s/litek8s/internal/kv"
)

// informer is what a follower of the change feed knows of one resource
// (informers below follow many through one watch): it lists the resource,
// then takes the feed's changes after the list's revision, and hands every
// change to handle, in revision order. When the watch ends because it fell
// behind the feed (kv.ErrExpired) it lists again and hands over the
// difference between what it knew and the new list as events (a Deleted
// for what went, an Added or Modified for the rest), as client-go's
// reflector does with a Replace.
//
// What it knew is kept without a copy of the resource: base, the store's
// immutable view it last listed (a copy-on-write B-tree that shares every
// unchanged node with the store), overlaid by changed, the keys changed
// since. Before changed grows past a fraction of base (and base holds on
// to too many replaced objects), the informer takes a newer view and
// adopts it once it has handed over every change up to that view's last
// one, so that its view is always exactly what it handed over.
//
// Concurrency: it belongs to its informers' goroutine; handle is called
// on it.
type informer struct {
	store    Store
	resource string
	handle   func(kv.Event)

	base    *kv.List
	baseLen int
	// changed: the objects changed since base, by key (nil: deleted).
	changed map[kv.Key]*kv.Object
	// next, when set, is a newer view to adopt as base once the changes up
	// to its ModRev were handed over.
	next *kv.List
	// listed is the revision of the last list: the changes up to it are
	// in the view; pos, the revision of the last change handed over.
	listed, pos uint64
	// minChanged: changed may hold max(minChanged, baseLen/changedFraction)
	// keys before a newer view is taken.
	minChanged int
}

// changedFraction bounds the keys changed since base, as a fraction of
// base, and with them the replaced objects base keeps alive.
const changedFraction = 16

func newInformer(store Store, resource string, handle func(kv.Event)) *informer {
	return &informer{store: store, resource: resource, handle: handle,
		changed: make(map[kv.Key]*kv.Object), minChanged: 1024}
}

// informers follows several resources of the local store through one
// watch of every resource: a goroutine per resource, each with its own
// watch, costs the leader a stack and a watcher for each of the ~60
// resources the garbage collector follows. Its owner adds and removes
// resources (each listed at once, its objects handed over as Added), and
// when Ready fires calls Take, which hands every change to its resource's
// informer. When the watch ends because it fell behind (kv.ErrExpired),
// or fails, every resource is listed again, and the watch resumes from
// the oldest list's revision.
//
// Concurrency: one goroutine, its owner's, calls every method; handle is
// called on it.
type informers struct {
	store   Store
	handle  func(kv.Event)
	resyncs *atomic.Uint64
	delay   time.Duration // before a relist after a failed watch
	log     *slog.Logger

	views map[string]*informer // by resource
	w     kv.Watcher           // nil: not watching
	evs   []kv.Event
}

// maxKeptEvents bounds the batch buffer informers keep between Takes.
const maxKeptEvents = 256

func newInformers(store Store, handle func(kv.Event), resyncs *atomic.Uint64, delay time.Duration,
	log *slog.Logger) *informers {
	return &informers{store: store, handle: handle, resyncs: resyncs, delay: delay, log: log,
		views: make(map[string]*informer)}
}

// has says whether resource is followed.
func (s *informers) has(resource string) bool { return s.views[resource] != nil }

// resources returns the resources followed.
func (s *informers) resources() []string { return slices.Collect(maps.Keys(s.views)) }

// add lists resource, hands its objects over and follows it.
func (s *informers) add(ctx context.Context, resource string) error {
	in := newInformer(s.store, resource, s.handle)
	if err := in.relist(ctx); err != nil {
		return err
	}
	s.views[resource] = in
	return nil
}

// remove stops following resource and calls fn for each object its view
// holds.
func (s *informers) remove(resource string, fn func(*kv.Object)) {
	in := s.views[resource]
	delete(s.views, resource)
	if in != nil {
		in.each(fn)
	}
}

// Ready receives when changes may wait to be taken (never before Watch
// started the watch).
func (s *informers) Ready() <-chan struct{} {
	if s.w == nil {
		return nil
	}
	return s.w.Ready()
}

// Watch starts the watch after the oldest list's revision (the changes
// up to each resource's own list are skipped), listing every resource
// again first when that revision already left the feed's window; false
// when ctx ended or the store closed.
func (s *informers) Watch(ctx context.Context) bool {
	return s.resume(ctx, s.watch())
}

func (s *informers) watch() error {
	from := s.store.Revision()
	for _, in := range s.views {
		from = min(from, in.listed)
	}
	w, err := s.store.Watch("", "", from)
	if err != nil {
		return err
	}
	s.w = w
	return nil
}

// Take hands over the waiting changes. When the watch ended it lists
// every resource again (after the relist delay when the watch failed) and
// watches anew; false when ctx ended or the store closed.
func (s *informers) Take(ctx context.Context) bool {
	var open bool
	s.evs, open = s.w.Take(s.evs[:0])
	for _, ev := range s.evs {
		if in := s.views[ev.Object.Key.Resource]; in != nil && ev.Object.RV > in.listed {
			in.record(ctx, ev)
			in.handle(ev)
		}
	}
	clear(s.evs)
	if cap(s.evs) > maxKeptEvents { // a burst's batch is not kept for good
		s.evs = nil
	}
	if open {
		return true
	}
	err := s.w.Err()
	s.w = nil
	if err == nil { // Stop
		return false
	}
	return s.resume(ctx, err)
}

// resume lists every resource again and watches anew while the last
// watch failed with err (nil: watching); false when ctx ended or the
// store closed.
func (s *informers) resume(ctx context.Context, err error) bool {
	for err != nil {
		switch {
		case ctx.Err() != nil, errors.Is(err, kv.ErrClosed):
			return false
		case errors.Is(err, kv.ErrExpired):
			s.log.Info("informers fell behind the change feed; listing again")
		default:
			s.log.Warn("informers' watch ended; listing again", "err", err)
			if !sleep(ctx, s.delay) {
				return false
			}
		}
		s.resyncs.Add(1)
		if err = s.relist(ctx); err == nil {
			err = s.watch()
		}
	}
	return true
}

// relist lists every resource again.
func (s *informers) relist(ctx context.Context) error {
	for _, in := range s.views {
		if err := in.relist(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Stop ends the watch.
func (s *informers) Stop() {
	if s.w != nil {
		s.w.Stop()
		s.w = nil
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// relist lists the resource and hands over what changed since the view.
func (in *informer) relist(ctx context.Context) error {
	l, err := in.store.List(ctx, in.resource, "", false)
	if err != nil {
		return err
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
	in.listed, in.pos = l.Rev, l.Rev
	return nil
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

// each calls fn for every object of the view.
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
