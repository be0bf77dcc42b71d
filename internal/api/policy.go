package api

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/litek8s/litek8s/internal/auth"
	"github.com/litek8s/litek8s/internal/kv"
)

// EnsureDefaultPolicy creates the default ClusterRoles and
// ClusterRoleBindings (auth.DefaultClusterRoles), Roles and RoleBindings
// (auth.DefaultRoles) that do not exist; it
// leaves those that do alone, changed or not. Leader only.
func (s *Server) EnsureDefaultPolicy(ctx context.Context) error {
	reg := s.registry()
	roles := reg.Lookup("rbac.authorization.k8s.io/v1", "clusterroles")
	bindings := reg.Lookup("rbac.authorization.k8s.io/v1", "clusterrolebindings")
	for _, cr := range auth.DefaultClusterRoles() {
		if err := s.ensure(ctx, &request{res: roles, name: cr.Name}, cr); err != nil {
			return err
		}
	}
	for _, b := range auth.DefaultClusterRoleBindings() {
		if err := s.ensure(ctx, &request{res: bindings, name: b.Name}, b); err != nil {
			return err
		}
	}
	for _, r := range auth.DefaultRoles() {
		if err := s.EnsureObject(ctx, "rbac.authorization.k8s.io/v1", "roles", r); err != nil {
			return err
		}
	}
	for _, b := range auth.DefaultRoleBindings() {
		if err := s.EnsureObject(ctx, "rbac.authorization.k8s.io/v1", "rolebindings", b); err != nil {
			return err
		}
	}
	return nil
}

// EnsureObject creates obj, of the built-in resource apiVersion/resource,
// unless something is stored at its namespace and name: a leader's
// seeding (the member records its bootstrap join token with it). Leader
// only.
func (s *Server) EnsureObject(ctx context.Context, apiVersion, resource string, obj runtime.Object) error {
	res := s.registry().Lookup(apiVersion, resource)
	m, err := meta.Accessor(obj)
	if res == nil || err != nil {
		return fmt.Errorf("api: cannot ensure a %s %s (%v)", apiVersion, resource, err)
	}
	return s.ensure(ctx, &request{res: res, namespace: m.GetNamespace(), name: m.GetName()}, obj)
}

// ensure creates obj at q through admission unless something is stored
// there already.
func (s *Server) ensure(ctx context.Context, q *request, obj runtime.Object) error {
	if _, _, err := s.store.Get(ctx, q.key(), false); err == nil {
		return nil
	}
	obj.GetObjectKind().SetGroupVersionKind(q.res.GVK())
	if _, err := s.admitCreate(ctx, q, obj); err != nil {
		return err
	}
	raw, err := encode(obj)
	if err != nil {
		return err
	}
	_, err = s.store.Propose(ctx, kv.Write{Op: kv.OpCreate, Key: q.key(), Object: raw})
	if err != nil && !errors.Is(err, kv.ErrAlreadyExists) {
		return err
	}
	return nil
}
