package kit

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
)

// Context is what one term's controllers share.
type Context struct {
	// Informers are the term's shared informers.
	Informers *Informers
	// Log is the controllers' logger.
	Log *slog.Logger
	// Queues are the member's work-queue metrics (nil: none); build
	// queues with NewQueue or NewLoop.
	Queues *QueueMetrics

	restConfig func(controller string) *rest.Config

	events  chan pendingEvent // to the event writer
	dropped atomic.Uint64     // events the full queue refused
	wg      sync.WaitGroup    // the event writer

	mu      sync.Mutex // guards clients
	clients map[string]kubernetes.Interface
}

// NewContext returns the Context of the term ctx; restConfig returns the
// in-process client configuration of a controller (its User-Agent names
// it); queues are the member's work-queue metrics (nil: none).
func NewContext(ctx context.Context, store Store, resyncs *atomic.Uint64, queues *QueueMetrics,
	restConfig func(controller string) *rest.Config, log *slog.Logger) *Context {
	c := &Context{Informers: NewInformers(store, resyncs), Log: log, Queues: queues, restConfig: restConfig,
		clients: make(map[string]kubernetes.Interface), events: make(chan pendingEvent, eventQueue)}
	c.wg.Go(func() { c.writeEvents(ctx) })
	return c
}

// Client returns controller's clientset: its requests go to the member's
// API handler in process, with the admin token. Watches are refused: read
// through Informers.
func (c *Context) Client(controller string) kubernetes.Interface {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cs, ok := c.clients[controller]; ok {
		return cs
	}
	cs, err := kubernetes.NewForConfig(c.restConfig(controller))
	if err != nil { // only a malformed rest.Config fails, and ours is fixed
		panic("kit: clientset: " + err.Error())
	}
	c.clients[controller] = cs
	return cs
}

// Recorder returns an event recorder writing core/v1 Events as controller
// (kubectl describe shows them); see events.go.
func (c *Context) Recorder(controller string) record.EventRecorder {
	return &recorder{source: controller, c: c}
}

// Shutdown waits for the event writer and the informers; call it after
// the term's context ended and the controllers returned.
func (c *Context) Shutdown() {
	c.wg.Wait()
	c.Informers.Wait()
}
