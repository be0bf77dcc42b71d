package kit

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
)

// Context is what one term's controllers share.
type Context struct {
	// Informers are the term's shared informers.
	Informers *Informers
	// Log is the controllers' logger.
	Log *slog.Logger

	restConfig func(controller string) *rest.Config

	mu          sync.Mutex // guards the fields below
	clients     map[string]kubernetes.Interface
	broadcaster []record.EventBroadcaster
}

// NewContext returns a term's Context; restConfig returns the in-process
// client configuration of a controller (its User-Agent names it).
func NewContext(store Store, resyncs *atomic.Uint64, restConfig func(controller string) *rest.Config, log *slog.Logger) *Context {
	return &Context{Informers: NewInformers(store, resyncs), Log: log, restConfig: restConfig,
		clients: make(map[string]kubernetes.Interface)}
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
// (kubectl describe shows them). Its goroutines end at Shutdown.
func (c *Context) Recorder(controller string) record.EventRecorder {
	b := record.NewBroadcaster(record.WithContext(context.Background()))
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.Client(controller).CoreV1().Events("")})
	c.mu.Lock()
	c.broadcaster = append(c.broadcaster, b)
	c.mu.Unlock()
	return b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: controller})
}

// Shutdown stops the recorders and waits for the informers; call it after
// the term's context ended and the controllers returned.
func (c *Context) Shutdown() {
	c.mu.Lock()
	bs := c.broadcaster
	c.broadcaster = nil
	c.mu.Unlock()
	for _, b := range bs {
		b.Shutdown()
	}
	c.Informers.Wait()
}
