package admission

import (
	"context"
	"fmt"

	kadmission "k8s.io/apiserver/pkg/admission"
)

// Config is the chain's plugins in the order kube runs them.
type Config struct {
	// Plugins each implement kube's admission.MutationInterface,
	// ValidationInterface or both.
	Plugins []kadmission.Interface
}

// DefaultConfig returns a Config with no plugins.
func DefaultConfig() Config { return Config{} }

// Validate reports a plugin that neither mutates nor validates.
func (c *Config) Validate() error {
	for i, p := range c.Plugins {
		if p == nil {
			return fmt.Errorf("admission: plugin %d is nil", i)
		}
		_, m := p.(kadmission.MutationInterface)
		_, v := p.(kadmission.ValidationInterface)
		if !m && !v {
			return fmt.Errorf("admission: plugin %d (%T) neither mutates nor validates", i, p)
		}
	}
	return nil
}

// Idler is implemented by a plugin that can tell cheaply that it would
// do nothing now (no configuration objects exist).
type Idler interface {
	Idle() bool
}

// Chain runs the plugins of a Config.
type Chain struct {
	mutating   []kadmission.MutationInterface
	validating []kadmission.ValidationInterface
}

// New builds the chain of cfg.
func New(cfg Config) (*Chain, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Chain{}
	for _, p := range cfg.Plugins {
		if m, ok := p.(kadmission.MutationInterface); ok {
			c.mutating = append(c.mutating, m)
		}
		if v, ok := p.(kadmission.ValidationInterface); ok {
			c.validating = append(c.validating, v)
		}
	}
	return c, nil
}

// Mutates reports whether Admit may do anything for op: some mutating
// plugin handles it and is not idle. Callers skip building attributes
// when it is false.
func (c *Chain) Mutates(op kadmission.Operation) bool {
	return c != nil && active(c.mutating, op)
}

// Validates reports whether Validate may do anything for op.
func (c *Chain) Validates(op kadmission.Operation) bool {
	return c != nil && active(c.validating, op)
}

// Idle reports whether no plugin may do anything now (a nil chain is
// idle).
func (c *Chain) Idle() bool {
	if c == nil {
		return true
	}
	for _, ps := range [][]kadmission.Interface{asInterfaces(c.mutating), asInterfaces(c.validating)} {
		for _, p := range ps {
			if i, ok := p.(Idler); !ok || !i.Idle() {
				return false
			}
		}
	}
	return true
}

func asInterfaces[P kadmission.Interface](ps []P) []kadmission.Interface {
	out := make([]kadmission.Interface, len(ps))
	for i, p := range ps {
		out[i] = p
	}
	return out
}

func active[P kadmission.Interface](ps []P, op kadmission.Operation) bool {
	for _, p := range ps {
		if i, ok := any(p).(Idler); ok && i.Idle() {
			continue
		}
		if p.Handles(op) {
			return true
		}
	}
	return false
}

// Admit runs the mutating plugins that handle a's operation, in order.
// When one of them asks for reinvocation (a webhook with
// reinvocationPolicy IfNeeded whose object another changed after it), the
// whole mutating chain runs once more with the attributes marked as a
// reinvocation, as kube's reinvoker does. The first error ends it. o
// converts and defaults objects for plugins that need another version of
// them (kube's ObjectInterfaces of the API's scheme).
func (c *Chain) Admit(ctx context.Context, a kadmission.Attributes, o kadmission.ObjectInterfaces) error {
	if err := c.admitOnce(ctx, a, o); err != nil {
		return err
	}
	if rc := a.GetReinvocationContext(); rc.ShouldReinvoke() {
		rc.SetIsReinvoke()
		return c.admitOnce(ctx, a, o)
	}
	return nil
}

func (c *Chain) admitOnce(ctx context.Context, a kadmission.Attributes, o kadmission.ObjectInterfaces) error {
	for _, m := range c.mutating {
		if !m.Handles(a.GetOperation()) {
			continue
		}
		if err := m.Admit(ctx, a, o); err != nil {
			return err
		}
	}
	return nil
}

// Validate runs the validating plugins that handle a's operation, in
// order; the first error ends it.
func (c *Chain) Validate(ctx context.Context, a kadmission.Attributes, o kadmission.ObjectInterfaces) error {
	for _, v := range c.validating {
		if !v.Handles(a.GetOperation()) {
			continue
		}
		if err := v.Validate(ctx, a, o); err != nil {
			return err
		}
	}
	return nil
}
