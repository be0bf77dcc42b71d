package discovery

import (
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// This file builds the aggregated discovery documents
// (apidiscovery.k8s.io/v2 APIGroupDiscoveryList).

// aggregatedList is the document for /api (the core group alone) or /apis
// (every other group). It has no kind/apiVersion: encodeAggregated adds them
// after hashing, as kube-apiserver computes its Etag without them.
func aggregatedList(groups []apiGroup) apidiscoveryv2.APIGroupDiscoveryList {
	list := apidiscoveryv2.APIGroupDiscoveryList{
		Items: make([]apidiscoveryv2.APIGroupDiscovery, 0, len(groups)),
	}
	for _, g := range groups {
		list.Items = append(list.Items, groupDiscovery(g))
	}
	return list
}

// groupDiscovery is one item; the core group's has "metadata":{}.
func groupDiscovery(g apiGroup) apidiscoveryv2.APIGroupDiscovery {
	item := apidiscoveryv2.APIGroupDiscovery{
		ObjectMeta: metav1.ObjectMeta{Name: g.name},
		Versions:   make([]apidiscoveryv2.APIVersionDiscovery, 0, len(g.versions)),
	}
	for _, v := range g.versions {
		item.Versions = append(item.Versions, versionDiscovery(v))
	}
	return item
}

func versionDiscovery(v apiVersion) apidiscoveryv2.APIVersionDiscovery {
	out := apidiscoveryv2.APIVersionDiscovery{
		Version:   v.version,
		Resources: make([]apidiscoveryv2.APIResourceDiscovery, 0, len(v.resources)),
		Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
	}
	for _, r := range v.resources {
		out.Resources = append(out.Resources, resourceDiscovery(r))
	}
	return out
}

func resourceDiscovery(r Resource) apidiscoveryv2.APIResourceDiscovery {
	scope := apidiscoveryv2.ScopeCluster
	if r.Namespaced {
		scope = apidiscoveryv2.ScopeNamespace
	}
	out := apidiscoveryv2.APIResourceDiscovery{
		Resource:         r.Resource,
		ResponseKind:     responseKind(r, r.Group, r.Version, r.Kind),
		Scope:            scope,
		SingularResource: r.Singular,
		Verbs:            r.Verbs,
		ShortNames:       r.ShortNames,
		Categories:       r.Categories,
	}
	for _, s := range r.Subresources {
		out.Subresources = append(out.Subresources, apidiscoveryv2.APISubresourceDiscovery{
			Subresource:  s.Name,
			ResponseKind: responseKind(r, s.Group, s.Version, s.Kind),
			Verbs:        s.Verbs,
		})
	}
	return out
}

// responseKind leaves group and version empty when they are the parent
// resource's, as kube-apiserver does.
func responseKind(parent Resource, group, version, kind string) *metav1.GroupVersionKind {
	if group == parent.Group && version == parent.Version {
		group, version = "", ""
	}
	return &metav1.GroupVersionKind{Group: group, Version: version, Kind: kind}
}
