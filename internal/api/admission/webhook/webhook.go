package webhook

import (
	"errors"
	"sync"

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
}

// Mutating is kube's MutatingAdmissionWebhook; Idle while no
// MutatingWebhookConfiguration exists.
type Mutating struct {
	*mutating.Plugin
	idle idleFunc
}

// Idle implements admission.Idler.
func (m *Mutating) Idle() bool { return m.idle() }

// Validating is kube's ValidatingAdmissionWebhook; Idle while no
// ValidatingWebhookConfiguration exists.
type Validating struct {
	*validating.Plugin
	idle idleFunc
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
	w.mutating = &Mutating{Plugin: mp, idle: newIdle(configuration.NewMutatingWebhookConfigurationManager(w.factory, nil))}
	w.validating = &Validating{Plugin: vp, idle: newIdle(configuration.NewValidatingWebhookConfigurationManager(w.factory, nil))}
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
