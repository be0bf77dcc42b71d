package policy

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/litek8s/litek8s/internal/kv"
)

// paramSource serves the objects of one paramKind from the local store in
// the shape kube's dispatcher reads params through (an informer's
// GenericLister): kube's generic.CollectParams does the name, selector,
// namespace and parameterNotFoundAction logic.
//
// The lister methods carry no context; they read the store without a
// consistent read, which never waits.
type paramSource struct {
	st  Store
	ref kindRef
}

// Informer is only asked whether it has synced (the local store always
// has); kube's CollectParams calls nothing else on it.
func (p *paramSource) Informer() cache.SharedIndexInformer { return syncedInformer{} }

// Lister returns the cluster-wide lister.
func (p *paramSource) Lister() cache.GenericLister { return paramLister{p: p} }

// syncedInformer reports HasSynced; every other method of the embedded
// interface is unset and must not be called.
type syncedInformer struct{ cache.SharedIndexInformer }

func (syncedInformer) HasSynced() bool { return true }

// paramLister lists one namespace ("" = all, or cluster-scoped).
type paramLister struct {
	p         *paramSource
	namespace string
}

func (l paramLister) ByNamespace(ns string) cache.GenericNamespaceLister {
	return paramLister{p: l.p, namespace: ns}
}

func (l paramLister) List(sel labels.Selector) ([]runtime.Object, error) {
	list, err := l.p.st.List(context.Background(), l.p.ref.storeKey, l.namespace, false)
	if err != nil {
		return nil, fmt.Errorf("policy: list params %s: %w", l.p.ref.storeKey, err)
	}
	var out []runtime.Object
	list.Range("", func(o *kv.Object) bool {
		if !sel.Matches(&o.Labels) {
			return true
		}
		var u *unstructured.Unstructured
		if u, err = decodeParam(o); err != nil {
			return false
		}
		out = append(out, u)
		return true
	})
	return out, err
}

func (l paramLister) Get(name string) (runtime.Object, error) {
	o, _, err := l.p.st.Get(context.Background(), kv.Key{Resource: l.p.ref.storeKey, Namespace: l.namespace, Name: name}, false)
	if err == kv.ErrNotFound {
		return nil, apierrors.NewNotFound(l.p.ref.gvr.GroupResource(), name)
	}
	if err != nil {
		return nil, fmt.Errorf("policy: get param %s/%s: %w", l.namespace, name, err)
	}
	return decodeParam(o)
}

func decodeParam(o *kv.Object) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(o.Raw); err != nil {
		return nil, fmt.Errorf("policy: decode param %s: %w", o.Key, err)
	}
	return u, nil
}
