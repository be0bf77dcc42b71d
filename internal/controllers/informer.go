package controllers

import (
	"context"
	"errors"
	"log/slog"
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
// Concurrency: run is the informer's one goroutine; handle is called on
// it. known and synced belong to it; after run returned, its owner may
// read known.
type informer struct {
	store    Store
	resource string
	handle   func(kv.Event)
	resyncs  *atomic.Uint64
	delay    time.Duration // before a relist after a failed watch
	log      *slog.Logger

	known  map[kv.Key]*kv.Object
	synced chan struct{} // closed once the first list was handed over
}

func newInformer(store Store, resource string, handle func(kv.Event), resyncs *atomic.Uint64,
	delay time.Duration, log *slog.Logger) *informer {
	return &informer{store: store, resource: resource, handle: handle, resyncs: resyncs, delay: delay,
		log: log.With("resource", resource), known: make(map[kv.Key]*kv.Object), synced: make(chan struct{})}
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

// relist lists the resource and hands over what changed since known.
func (in *informer) relist(ctx context.Context) (uint64, error) {
	l, err := in.store.List(ctx, in.resource, "", false)
	if err != nil {
		return 0, err
	}
	seen := make(map[kv.Key]*kv.Object, len(in.known))
	l.Range("", func(obj *kv.Object) bool {
		seen[obj.Key] = obj
		return true
	})
	for k, old := range in.known {
		if cur := seen[k]; cur == nil || cur.UID != old.UID {
			in.handle(kv.Event{Type: kv.Deleted, Object: old, Prev: old})
			delete(in.known, k)
		}
	}
	l.Range("", func(obj *kv.Object) bool {
		switch old := in.known[obj.Key]; {
		case old == nil:
			in.handle(kv.Event{Type: kv.Added, Object: obj})
		case old.RV != obj.RV:
			in.handle(kv.Event{Type: kv.Modified, Object: obj, Prev: old})
		}
		in.known[obj.Key] = obj
		return true
	})
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
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.Events():
			if !ok {
				if err := w.Err(); err != nil {
					return err
				}
				return kv.ErrClosed // stopped by someone else: the store
			}
			if ev.Type == kv.Deleted {
				delete(in.known, ev.Object.Key)
			} else {
				in.known[ev.Object.Key] = ev.Object
			}
			in.handle(ev)
		}
	}
}
