package webhook

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/configuration"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/generic"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/validating"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/api/svcclient"
)

// Config is what the webhook plugins read.
type Config struct {
	// Client reads the webhook configurations and Namespaces (list and
	// watch) from the member's own API.
	Client kubernetes.Interface
	// Services resolves clientConfig.service through EndpointSlices.
	Services svcclient.Reader
}

// Validate reports a missing collaborator.
func (c *Config) Validate() error {
	if c.Client == nil || c.Services == nil {
		return errors.New("webhook: Client and Services are required")
	}
	return nil
}

// Webhooks are the two admission plugins and the informers they read.
type Webhooks struct {
	factory    informers.SharedInformerFactory
	mutating   *Mutating
	validating *Validating

	mu     sync.Mutex // guards stop and closed
	stop   chan struct{}
	closed bool
	// closing is set by Close: a request waiting for the informers to
	// sync stops waiting (see gate).
	closing atomic.Bool
}

// gate ends the wait of kube's plugins for their informers when the
// member closes. A plugin's Admit or Validate first waits up to 10 s,
// ignoring the request's context, until its informers (webhook
// configurations, Namespaces) have listed: a write that came during
// start-up, on a member then stopped, kept the member's shutdown waiting
// those 10 s. The plugins' ready func is also true once closing; a
// request that got through that way is refused here, 503, because its
// webhooks were never read.
type gate struct {
	closing *atomic.Bool
	synced  func() bool
}

func (g gate) ready() bool { return g.closing.Load() || g.synced() }

func (g gate) check(err error) error {
	if g.closing.Load() && !g.synced() {
		return apierrors.NewServiceUnavailable("the member is shutting down and never read the webhook configurations")
	}
	return err
}

// Mutating is kube's MutatingAdmissionWebhook; Idle while no
// MutatingWebhookConfiguration exists.
type Mutating struct {
	*mutating.Plugin
	idle idleFunc
	gate gate
}

// Admit runs the webhooks (see gate).
func (m *Mutating) Admit(ctx context.Context, a kadmission.Attributes, o kadmission.ObjectInterfaces) error {
	return m.gate.check(m.Plugin.Admit(ctx, a, o))
}

// Idle implements admission.Idler.
func (m *Mutating) Idle() bool { return m.idle() }

// Validating is kube's ValidatingAdmissionWebhook; Idle while no
// ValidatingWebhookConfiguration exists.
type Validating struct {
	*validating.Plugin
	idle idleFunc
	gate gate
}

// Validate runs the webhooks (see gate).
func (v *Validating) Validate(ctx context.Context, a kadmission.Attributes, o kadmission.ObjectInterfaces) error {
	return v.gate.check(v.Plugin.Validate(ctx, a, o))
}

// Idle implements admission.Idler.
func (v *Validating) Idle() bool { return v.idle() }

// initializable is what the generic webhook needs before use.
type initializable interface {
	SetExternalKubeClientSet(kubernetes.Interface)
	SetExternalKubeInformerFactory(informers.SharedInformerFactory)
	ValidateInitialization() error
}

// New builds both plugins; Start runs their informers.
func New(cfg Config) (*Webhooks, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w := &Webhooks{factory: informers.NewSharedInformerFactory(cfg.Client, 0)}
	mp, err := mutating.NewMutatingWebhook(nil)
	if err != nil {
		return nil, err
	}
	vp, err := validating.NewValidatingAdmissionWebhook(nil)
	if err != nil {
		return nil, err
	}
	res := resolver{rd: cfg.Services}
	mp.SetServiceResolver(res)
	vp.SetServiceResolver(res)
	for _, p := range []initializable{mp, vp} {
		p.SetExternalKubeClientSet(cfg.Client)
		p.SetExternalKubeInformerFactory(w.factory)
		if err := p.ValidateInitialization(); err != nil {
			return nil, err
		}
	}
	// The same shared informers as the plugins' own ready funcs wait for.
	ns := w.factory.Core().V1().Namespaces().Informer()
	msrc := configuration.NewMutatingWebhookConfigurationManager(w.factory, nil)
	vsrc := configuration.NewValidatingWebhookConfigurationManager(w.factory, nil)
	mg := gate{closing: &w.closing, synced: func() bool { return ns.HasSynced() && msrc.HasSynced() }}
	vg := gate{closing: &w.closing, synced: func() bool { return ns.HasSynced() && vsrc.HasSynced() }}
	mp.SetReadyFunc(mg.ready)
	vp.SetReadyFunc(vg.ready)
	w.mutating = &Mutating{Plugin: mp, idle: newIdle(msrc), gate: mg}
	w.validating = &Validating{Plugin: vp, idle: newIdle(vsrc), gate: vg}
	return w, nil
}

// Mutating is the MutatingAdmissionWebhook plugin.
func (w *Webhooks) Mutating() kadmission.Interface { return w.mutating }

// Validating is the ValidatingAdmissionWebhook plugin.
func (w *Webhooks) Validating() kadmission.Interface { return w.validating }

// Start runs the informers until Close (once; not after Close).
func (w *Webhooks) Start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stop != nil || w.closed {
		return
	}
	w.stop = make(chan struct{})
	w.factory.Start(w.stop)
}

// Close stops the informers and waits for them. A second Close does
// nothing more (a member may be closed twice).
func (w *Webhooks) Close() {
	w.closing.Store(true)
	w.mu.Lock()
	if w.stop != nil && !w.closed {
		close(w.stop)
	}
	w.closed = true
	w.mu.Unlock()
	w.factory.Shutdown()
}

// idleFunc reports that no configuration exists (and the informer has
// listed them, so that none is missed).
type idleFunc func() bool

func newIdle(src generic.Source) idleFunc {
	return func() bool { return src.HasSynced() && len(src.Webhooks()) == 0 }
}
