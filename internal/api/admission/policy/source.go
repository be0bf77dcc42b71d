package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	arv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"

	"github.com/litek8s/litek8s/internal/kv"
)

// Where the store keeps policies and bindings.
const (
	policiesKey = "validatingadmissionpolicies.admissionregistration.k8s.io"
	bindingsKey = "validatingadmissionpolicybindings.admissionregistration.k8s.io"
)

// snapshot is the compiled set at one state of the store: it is reused
// while neither the policies, the bindings nor the CRDs changed.
type snapshot struct {
	policiesRev, bindingsRev, crdsRev uint64
	hooks                             []validating.PolicyHook
	// compiled keeps each policy's Validator by name and resourceVersion,
	// so that a change to one policy (or to a binding) recompiles only
	// what changed.
	compiled map[string]compiledPolicy
}

type compiledPolicy struct {
	rv        uint64
	validator validating.Validator
}

// current returns the hooks for the store's present state; nil when no
// binding exists (the fast path: one List of the bindings).
func (p *Plugin) current(ctx context.Context) ([]validating.PolicyHook, error) {
	bl, err := p.cfg.Store.List(ctx, bindingsKey, "", false)
	if err != nil {
		return nil, fmt.Errorf("policy: list bindings: %w", err)
	}
	if bl.Len() == 0 {
		return nil, nil
	}
	pl, err := p.cfg.Store.List(ctx, policiesKey, "", false)
	if err != nil {
		return nil, fmt.Errorf("policy: list policies: %w", err)
	}
	cl, err := listCRDs(ctx, p.cfg.Store)
	if err != nil {
		return nil, fmt.Errorf("policy: list CRDs: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.snap; s != nil && s.bindingsRev == bl.ModRev && s.policiesRev == pl.ModRev && s.crdsRev == cl.ModRev {
		return s.hooks, nil
	}
	s, err := p.build(bl, pl, cl)
	if err != nil {
		return nil, err
	}
	p.snap = s
	return s.hooks, nil
}

// build compiles the policies that have bindings. Caller must hold mu.
func (p *Plugin) build(bl, pl, cl *kv.List) (*snapshot, error) {
	byPolicy := map[string][]*arv1.ValidatingAdmissionPolicyBinding{}
	var err error
	bl.Range("", func(o *kv.Object) bool {
		b := &arv1.ValidatingAdmissionPolicyBinding{}
		if err = json.Unmarshal(o.Raw, b); err != nil {
			err = fmt.Errorf("policy: decode binding %s: %w", o.Key.Name, err)
			return false
		}
		byPolicy[b.Spec.PolicyName] = append(byPolicy[b.Spec.PolicyName], b)
		return true
	})
	if err != nil {
		return nil, err
	}
	s := &snapshot{policiesRev: pl.ModRev, bindingsRev: bl.ModRev, crdsRev: cl.ModRev,
		compiled: map[string]compiledPolicy{}}
	pl.Range("", func(o *kv.Object) bool {
		bindings := byPolicy[o.Key.Name]
		if len(bindings) == 0 { // a policy without a binding does nothing
			return true
		}
		pol := &arv1.ValidatingAdmissionPolicy{}
		if err = json.Unmarshal(o.Raw, pol); err != nil {
			err = fmt.Errorf("policy: decode policy %s: %w", o.Key.Name, err)
			return false
		}
		s.hooks = append(s.hooks, p.hook(pol, o.RV, bindings, cl, s.compiled))
		return true
	})
	if err != nil {
		return nil, err
	}
	// kube's source yields policies in no set order; a stable one makes
	// the first denial reported deterministic.
	sort.Slice(s.hooks, func(i, j int) bool { return s.hooks[i].Policy.Name < s.hooks[j].Policy.Name })
	return s, nil
}

// hook compiles pol (or reuses its Validator at the same
// resourceVersion) and resolves its paramKind. Caller must hold mu.
func (p *Plugin) hook(pol *arv1.ValidatingAdmissionPolicy, rv uint64, bindings []*arv1.ValidatingAdmissionPolicyBinding,
	crds *kv.List, compiled map[string]compiledPolicy) validating.PolicyHook {
	var v validating.Validator
	if old, ok := p.snap.compiledPolicy(pol.Name); ok && old.rv == rv {
		v = old.validator
	} else {
		v = compile(p.env, pol)
	}
	compiled[pol.Name] = compiledPolicy{rv: rv, validator: v}
	h := validating.PolicyHook{Policy: pol, Bindings: bindings, Evaluator: v}
	if pk := pol.Spec.ParamKind; pk != nil {
		ref, err := p.resolveParamKind(pk, crds)
		if err != nil {
			h.ConfigurationError = err
		} else {
			h.ParamInformer = &paramSource{st: p.cfg.Store, ref: ref}
			h.ParamScope = ref.scope
		}
	}
	return h
}

func (s *snapshot) compiledPolicy(name string) (compiledPolicy, bool) {
	if s == nil {
		return compiledPolicy{}, false
	}
	c, ok := s.compiled[name]
	return c, ok
}

// resolveParamKind finds where the objects of a paramKind live: a
// built-in kind or a served version of a CRD. Kube's message otherwise.
func (p *Plugin) resolveParamKind(pk *arv1.ParamKind, crds *kv.List) (kindRef, error) {
	gv, err := schema.ParseGroupVersion(pk.APIVersion)
	if err != nil {
		return kindRef{}, fmt.Errorf("failed to parse paramKind APIVersion: %w", err)
	}
	gvk := gv.WithKind(pk.Kind)
	if ref, ok := p.builtin[gvk]; ok {
		return ref, nil
	}
	ref, ok, err := customKind(crds, gvk)
	if err != nil {
		return kindRef{}, err
	}
	if !ok {
		return kindRef{}, fmt.Errorf("failed to find resource referenced by paramKind: '%v'", gvk)
	}
	return ref, nil
}
