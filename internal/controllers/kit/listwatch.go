package kit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/litek8s/litek8s/internal/kv"
)

// listWatch is a client-go ListerWatcher over one resource of the local
// store: List decodes the stored objects into typed ones, Watch follows the
// change feed from the list's revision. A watch that fell behind the feed
// ends with a 410 Expired error event, on which the reflector lists again;
// every list after the first counts as a resync.
type listWatch struct {
	store    Store
	resource string
	newObj   func() runtime.Object
	newList  func() runtime.Object
	// keep, when set, limits the informer to the objects it accepts,
	// judged by key before anything is decoded.
	keep    func(kv.Key) bool
	lists   atomic.Uint64
	resyncs *atomic.Uint64
}

var (
	_ interface {
		List(metav1.ListOptions) (runtime.Object, error)
		Watch(metav1.ListOptions) (watch.Interface, error)
		ListWithContext(context.Context, metav1.ListOptions) (runtime.Object, error)
		WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error)
	} = (*listWatch)(nil)
)

// IsWatchListSemanticsUnSupported tells client-go's reflector to list then
// watch: the local feed sends no initial events.
func (lw *listWatch) IsWatchListSemanticsUnSupported() bool { return true }

func (lw *listWatch) List(opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

func (lw *listWatch) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}

// ListWithContext lists every object of the resource (options other than
// the resource version are not used: informers list everything).
func (lw *listWatch) ListWithContext(ctx context.Context, _ metav1.ListOptions) (runtime.Object, error) {
	if lw.lists.Add(1) > 1 {
		lw.resyncs.Add(1)
	}
	l, err := lw.store.List(ctx, lw.resource, "", false)
	if err != nil {
		return nil, err
	}
	var items []runtime.Object
	var derr error
	l.Range("", func(o *kv.Object) bool {
		if lw.keep != nil && !lw.keep(o.Key) {
			return true
		}
		obj, err := lw.decode(o)
		if err != nil {
			derr = err
			return false
		}
		items = append(items, obj)
		return true
	})
	if derr != nil {
		return nil, derr
	}
	list := lw.newList()
	if err := meta.SetList(list, items); err != nil {
		return nil, fmt.Errorf("kit: list of %s: %w", lw.resource, err)
	}
	acc, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	acc.SetResourceVersion(strconv.FormatUint(l.Rev, 10))
	return list, nil
}

// WatchWithContext follows the change feed after opts.ResourceVersion.
func (lw *listWatch) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	rev, err := strconv.ParseUint(opts.ResourceVersion, 10, 64)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("kit: watch of %s from resourceVersion %q", lw.resource, opts.ResourceVersion))
	}
	w, err := lw.store.Watch(lw.resource, "", rev)
	if errors.Is(err, kv.ErrExpired) {
		return nil, apierrors.NewResourceExpired(err.Error())
	}
	if err != nil {
		return nil, err
	}
	fw := &feedWatch{lw: lw, w: w, out: make(chan watch.Event), stop: make(chan struct{}), done: make(chan struct{})}
	go fw.run(ctx)
	return fw, nil
}

func (lw *listWatch) decode(o *kv.Object) (runtime.Object, error) {
	obj := lw.newObj()
	if err := json.Unmarshal(o.Raw, obj); err != nil {
		return nil, fmt.Errorf("kit: decode %s %s/%s: %w", lw.resource, o.Key.Namespace, o.Key.Name, err)
	}
	return obj, nil
}

// feedWatch adapts a kv.Watcher to watch.Interface.
type feedWatch struct {
	lw   *listWatch
	w    kv.Watcher
	out  chan watch.Event
	stop chan struct{} // closed by Stop
	once atomic.Bool
	done chan struct{} // closed when run returned
}

func (fw *feedWatch) ResultChan() <-chan watch.Event { return fw.out }

// Stop ends the watch and waits for its goroutine.
func (fw *feedWatch) Stop() {
	if fw.once.CompareAndSwap(false, true) {
		close(fw.stop)
	}
	<-fw.done
}

func (fw *feedWatch) run(ctx context.Context) {
	defer close(fw.done)
	defer close(fw.out)
	defer fw.w.Stop()
	var evs []kv.Event
	for {
		select {
		case <-ctx.Done():
			return
		case <-fw.stop:
			return
		case <-fw.w.Ready():
			var open bool
			evs, open = fw.w.Take(evs[:0])
			ok := fw.deliver(ctx, evs)
			clear(evs)
			if !ok {
				return
			}
			if !open {
				if err := fw.w.Err(); err != nil {
					fw.send(ctx, watch.Event{Type: watch.Error, Object: statusOf(err)})
				}
				return
			}
		}
	}
}

// deliver sends evs to the watch's reader; false when the watch is over.
func (fw *feedWatch) deliver(ctx context.Context, evs []kv.Event) bool {
	for _, ev := range evs {
		if fw.lw.keep != nil && !fw.lw.keep(ev.Object.Key) {
			continue
		}
		obj, err := fw.lw.decode(ev.Object)
		if err != nil {
			fw.send(ctx, watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus})
			return false
		}
		if !fw.send(ctx, watch.Event{Type: eventType(ev.Type), Object: obj}) {
			return false
		}
	}
	return true
}

func (fw *feedWatch) send(ctx context.Context, ev watch.Event) bool {
	select {
	case fw.out <- ev:
		return true
	case <-ctx.Done():
	case <-fw.stop:
	}
	return false
}

func eventType(t kv.EventType) watch.EventType {
	switch t {
	case kv.Added:
		return watch.Added
	case kv.Deleted:
		return watch.Deleted
	default:
		return watch.Modified
	}
}

// statusOf makes the error that ended a feed watch a Status: 410 Expired
// when the watch fell behind (the reflector then lists again).
func statusOf(err error) *metav1.Status {
	if errors.Is(err, kv.ErrExpired) {
		return &apierrors.NewResourceExpired(err.Error()).ErrStatus
	}
	return &apierrors.NewInternalError(err).ErrStatus
}
