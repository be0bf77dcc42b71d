package kit

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	ref "k8s.io/client-go/tools/reference"
)

// Events. client-go's EventBroadcaster keeps writing (and retrying) after
// Shutdown returns, from goroutines nobody can wait for, so a term's events
// go through its own writer instead: Eventf queues an event (never
// blocking: a full queue drops it, as kube's recorder does under
// pressure), one goroutine per Context writes them in order with the
// controller's client and the term's context, and repeats of the same
// event (object, type, reason, message) in the term become one Event whose
// count and lastTimestamp grow, as kube's correlator does.

// eventQueue is how many events may wait to be written.
const eventQueue = 1024

type pendingEvent struct {
	source string
	ev     *corev1.Event
}

// eventKey identifies repeats of one event.
type eventKey struct {
	uid                          types.UID
	source, typ, reason, message string
}

type seenEvent struct {
	namespace, name string
	count           int32
}

type recorder struct {
	source string
	c      *Context
}

var _ record.EventRecorder = (*recorder)(nil)

func (r *recorder) Event(obj runtime.Object, typ, reason, message string) {
	r.c.queueEvent(r.source, obj, nil, typ, reason, message)
}

func (r *recorder) Eventf(obj runtime.Object, typ, reason, format string, args ...any) {
	r.c.queueEvent(r.source, obj, nil, typ, reason, fmt.Sprintf(format, args...))
}

func (r *recorder) AnnotatedEventf(obj runtime.Object, annotations map[string]string, typ, reason, format string, args ...any) {
	r.c.queueEvent(r.source, obj, annotations, typ, reason, fmt.Sprintf(format, args...))
}

func (c *Context) queueEvent(source string, obj runtime.Object, annotations map[string]string, typ, reason, message string) {
	objRef, err := ref.GetReference(scheme.Scheme, obj)
	if err != nil {
		c.Log.Warn("event about an object without a reference", "reason", reason, "err", err)
		return
	}
	now := metav1.Now()
	ns := objRef.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%v.%x", objRef.Name, now.UnixNano()), Namespace: ns,
			Annotations: annotations},
		InvolvedObject: *objRef, Reason: reason, Message: message, Type: typ, Count: 1,
		FirstTimestamp: now, LastTimestamp: now, Source: corev1.EventSource{Component: source},
		ReportingController: source,
	}
	select {
	case c.events <- pendingEvent{source: source, ev: ev}:
	default:
		if n := c.dropped.Add(1); n&(n-1) == 0 { // the 1st, 2nd, 4th, 8th… drop
			c.Log.Warn("event queue full: events dropped", "dropped", n, "reason", reason, "object", objRef.Name)
		}
	}
}

// writeEvents writes queued events until ctx ends.
func (c *Context) writeEvents(ctx context.Context) {
	seen := make(map[eventKey]*seenEvent)
	for {
		select {
		case <-ctx.Done():
			return
		case p := <-c.events:
			c.writeEvent(ctx, seen, p)
		}
	}
}

func (c *Context) writeEvent(ctx context.Context, seen map[eventKey]*seenEvent, p pendingEvent) {
	ev := p.ev
	key := eventKey{uid: ev.InvolvedObject.UID, source: p.source, typ: ev.Type, reason: ev.Reason, message: ev.Message}
	events := c.Client(p.source).CoreV1().Events
	if s := seen[key]; s != nil {
		patch := fmt.Sprintf(`{"count":%d,"lastTimestamp":%q}`, s.count+1, ev.LastTimestamp.UTC().Format(time.RFC3339))
		if _, err := events(s.namespace).Patch(ctx, s.name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err == nil {
			s.count++
			return
		}
		delete(seen, key) // gone (or failing): write a new one
	}
	created, err := events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{})
	if err != nil {
		if ctx.Err() == nil {
			c.Log.Warn("event not written", "reason", ev.Reason, "object", ev.InvolvedObject.Name, "err", err)
		}
		return
	}
	seen[key] = &seenEvent{namespace: created.Namespace, name: created.Name, count: 1}
}
