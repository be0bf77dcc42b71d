package policy

import (
	"context"
	"encoding/json"
	"fmt"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
)

// crdsKey is where the store keeps CustomResourceDefinitions.
const crdsKey = "customresourcedefinitions.apiextensions.k8s.io"

// kindRef is where the objects of a paramKind live.
type kindRef struct {
	storeKey string // the store's resource name ("configmaps", "replicalimits.rules.example.com")
	gvr      schema.GroupVersionResource
	scope    meta.RESTScope
}

// builtinKinds indexes rs by group/version/kind.
func builtinKinds(rs []*registry.Resource) map[schema.GroupVersionKind]kindRef {
	m := make(map[schema.GroupVersionKind]kindRef, len(rs))
	for _, r := range rs {
		m[r.GVK()] = kindRef{storeKey: r.StoreKey(), gvr: r.GroupResource().WithVersion(r.Version), scope: scopeOf(r.Namespaced)}
	}
	return m
}

func scopeOf(namespaced bool) meta.RESTScope {
	if namespaced {
		return meta.RESTScopeNamespace
	}
	return meta.RESTScopeRoot
}

// customKind finds gvk among the served versions of the CRDs in crds.
func customKind(crds *kv.List, gvk schema.GroupVersionKind) (kindRef, bool, error) {
	var (
		ref   kindRef
		found bool
		err   error
	)
	crds.Range("", func(o *kv.Object) bool {
		var crd apiextv1.CustomResourceDefinition
		if err = json.Unmarshal(o.Raw, &crd); err != nil {
			err = fmt.Errorf("policy: decode CRD %s: %w", o.Key.Name, err)
			return false
		}
		if crd.Spec.Group != gvk.Group || crd.Spec.Names.Kind != gvk.Kind {
			return true
		}
		for _, v := range crd.Spec.Versions {
			if v.Name == gvk.Version && v.Served {
				ref = kindRef{storeKey: crd.Spec.Names.Plural + "." + crd.Spec.Group,
					gvr:   schema.GroupVersionResource{Group: gvk.Group, Version: v.Name, Resource: crd.Spec.Names.Plural},
					scope: scopeOf(crd.Spec.Scope == apiextv1.NamespaceScoped)}
				found = true
			}
		}
		return !found
	})
	return ref, found, err
}

// listCRDs reads the CRDs from the local store.
func listCRDs(ctx context.Context, st Store) (*kv.List, error) {
	return st.List(ctx, crdsKey, "", false)
}
