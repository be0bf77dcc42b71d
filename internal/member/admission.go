package member

import (
	"context"
	"net/http"

	kadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/litek8s/litek8s/internal/api/admission"
	"github.com/litek8s/litek8s/internal/api/admission/policy"
	"github.com/litek8s/litek8s/internal/api/admission/webhook"
	"github.com/litek8s/litek8s/internal/auth"
)

// admissionChain builds the member's dynamic admission chain, its plugins
// in kube-apiserver's order: MutatingAdmissionWebhook,
// ValidatingAdmissionPolicy, ValidatingAdmissionWebhook (ResourceQuota,
// which kube runs last, is the API's own admitQuota after the chain).
// Plugins run only on the member that executes a write (the leader). The
// webhook plugins read their configurations through informers on the
// member's own API (loopback token over rt); startAdmission starts them
// once the API serves.
func (m *Member) admissionChain(loopback string, rt http.RoundTripper) (*admission.Chain, error) {
	client, err := kubernetes.NewForConfig(&rest.Config{Host: m.url, BearerToken: loopback, Transport: rt,
		UserAgent: "litek8s-admission", QPS: -1})
	if err != nil {
		return nil, err
	}
	if m.webhooks, err = webhook.New(webhook.Config{Client: client, Services: m.store}); err != nil {
		return nil, err
	}
	pc := policy.DefaultConfig()
	pc.Store = m.store
	pc.Authorizer = policy.Authorizer(func(ctx context.Context, a auth.Attributes) (auth.Decision, error) {
		return m.api.Authorize(ctx, a) // m.api is set before the API serves a write
	})
	vap, err := policy.New(pc)
	if err != nil {
		return nil, err
	}
	plugins := []kadmission.Interface{
		m.webhooks.Mutating(),
		vap,
		m.webhooks.Validating(),
	}
	return admission.New(admission.Config{Plugins: plugins})
}

// startAdmission starts the admission plugins' informers.
func (m *Member) startAdmission() {
	if m.webhooks != nil {
		m.webhooks.Start()
	}
}

// closeAdmission stops them and waits (before the API server shuts down:
// their watches are its clients).
func (m *Member) closeAdmission() {
	if m.webhooks != nil {
		m.webhooks.Close()
	}
}
