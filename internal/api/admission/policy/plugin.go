package policy

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/cel/environment"

	litekadmission "github.com/litek8s/litek8s/internal/api/admission"
)

// PluginName is kube's name of the plugin.
const PluginName = validating.PluginName

// Plugin is the ValidatingAdmissionPolicy admission plugin.
type Plugin struct {
	*admission.Handler
	cfg        Config
	env        *environment.EnvSet
	builtin    map[schema.GroupVersionKind]kindRef
	excluded   sets.Set[schema.GroupResource]
	dispatcher generic.Dispatcher[validating.PolicyHook]

	mu   sync.Mutex // protects snap
	snap *snapshot
}

var (
	_ admission.Interface           = (*Plugin)(nil)
	_ admission.ValidationInterface = (*Plugin)(nil)
	_ litekadmission.Idler          = (*Plugin)(nil)
)

// New returns a Plugin reading from cfg.Store.
func New(cfg Config) (*Plugin, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ns := namespaceLister{st: cfg.Store}
	client, err := namespaceClient(cfg.Store)
	if err != nil {
		return nil, fmt.Errorf("policy: namespace client: %w", err)
	}
	m := matching.NewMatcher(ns, client)
	if err := m.ValidateInitialization(); err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	authz := cfg.Authorizer
	if authz == nil {
		authz = noAuthorizer{}
	}
	p := &Plugin{
		Handler:    admission.NewHandler(admission.Connect, admission.Create, admission.Delete, admission.Update),
		cfg:        cfg,
		env:        environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()),
		builtin:    builtinKinds(cfg.Builtin),
		excluded:   excludedResources(cfg),
		dispatcher: validating.NewDispatcher(authz, generic.NewPolicyMatcher(m)),
	}
	return p, nil
}

// excludedResources are what kube never sends to API-defined policies:
// the policies and bindings themselves (no circular dependency) and the
// resources that are never stored (access and token reviews).
func excludedResources(cfg Config) sets.Set[schema.GroupResource] {
	const g = "admissionregistration.k8s.io"
	s := sets.New(
		schema.GroupResource{Group: g, Resource: "validatingadmissionpolicies"},
		schema.GroupResource{Group: g, Resource: "validatingadmissionpolicybindings"},
		schema.GroupResource{Group: g, Resource: "mutatingadmissionpolicies"},
		schema.GroupResource{Group: g, Resource: "mutatingadmissionpolicybindings"},
	)
	for _, r := range cfg.Builtin {
		if r.Review {
			s.Insert(r.GroupResource())
		}
	}
	return s
}

// Validate evaluates the policies bound to the request: nil when every
// one admits it (warnings and audit annotations are recorded through ctx
// and a), else kube's Status error.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	if p.excluded.Has(a.GetResource().GroupResource()) {
		return nil
	}
	hooks, err := p.current(ctx)
	if err != nil {
		return admission.NewForbidden(a, err)
	}
	if len(hooks) == 0 {
		return nil
	}
	return p.dispatcher.Dispatch(ctx, a, o, hooks)
}

// Idle reports whether no binding exists, so that no policy can apply
// (the admission chain then builds no attributes): one List.
func (p *Plugin) Idle() bool {
	bl, err := p.cfg.Store.List(context.Background(), bindingsKey, "", false)
	return err == nil && bl.Len() == 0
}

// noAuthorizer answers CEL's `authorizer` when no authorizer is configured.
type noAuthorizer struct{}

func (noAuthorizer) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionNoOpinion, "no authorizer configured", nil
}
