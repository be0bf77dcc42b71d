package discovery

import (
	"crypto/sha256"
	"encoding/base64"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// This file builds the legacy (unaggregated) discovery documents.

// apiVersionsDoc is GET /api: the core versions and the address to use.
// kube-apiserver sends it without apiVersion.
func apiVersionsDoc(core apiGroup, serverAddress string) *metav1.APIVersions {
	doc := &metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		Versions: make([]string, 0, len(core.versions)),
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: serverAddress},
		},
	}
	for _, v := range core.versions {
		doc.Versions = append(doc.Versions, v.version)
	}
	return doc
}

// apiGroupListDoc is GET /apis without aggregation.
func apiGroupListDoc(groups []apiGroup) *metav1.APIGroupList {
	doc := &metav1.APIGroupList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
		Groups:   make([]metav1.APIGroup, 0, len(groups)),
	}
	for _, g := range groups {
		doc.Groups = append(doc.Groups, apiGroupEntry(g))
	}
	return doc
}

// apiGroupDoc is GET /apis/{group}.
func apiGroupDoc(g apiGroup) *metav1.APIGroup {
	doc := apiGroupEntry(g)
	doc.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
	return &doc
}

// apiGroupEntry is a group as listed in APIGroupList: without kind and
// apiVersion.
func apiGroupEntry(g apiGroup) metav1.APIGroup {
	doc := metav1.APIGroup{
		Name:     g.name,
		Versions: make([]metav1.GroupVersionForDiscovery, 0, len(g.versions)),
	}
	for _, v := range g.versions {
		doc.Versions = append(doc.Versions, metav1.GroupVersionForDiscovery{
			GroupVersion: groupVersion(g.name, v.version),
			Version:      v.version,
		})
	}
	if len(doc.Versions) > 0 {
		doc.PreferredVersion = doc.Versions[0]
	}
	return doc
}

// apiResourceListDoc is GET /api/{version} or /apis/{group}/{version}. Each
// subresource follows its resource as "<resource>/<subresource>"; the list
// is sorted by that name, as kube-apiserver installs its paths. The core
// group's list has no apiVersion, like kube-apiserver's.
func apiResourceListDoc(group string, v apiVersion) *metav1.APIResourceList {
	doc := &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: groupVersion(group, v.version),
	}
	if group == "" {
		doc.APIVersion = ""
	}
	for _, r := range v.resources {
		doc.APIResources = append(doc.APIResources, apiResource(r))
		for _, s := range r.Subresources {
			doc.APIResources = append(doc.APIResources, apiSubresource(r, s))
		}
	}
	sortAPIResources(doc.APIResources)
	return doc
}

func apiResource(r Resource) metav1.APIResource {
	return metav1.APIResource{
		Name:               r.Resource,
		SingularName:       r.Singular,
		Namespaced:         r.Namespaced,
		Kind:               r.Kind,
		Verbs:              r.Verbs,
		ShortNames:         r.ShortNames,
		Categories:         r.Categories,
		StorageVersionHash: storageVersionHash(r.Group, r.Version, r.Kind),
	}
}

// apiSubresource names the answer's group and version only when they differ
// from the parent's (deployments/scale answers autoscaling/v1 Scale).
func apiSubresource(parent Resource, s Subresource) metav1.APIResource {
	out := metav1.APIResource{
		Name:       parent.Resource + "/" + s.Name,
		Namespaced: parent.Namespaced,
		Kind:       s.Kind,
		Verbs:      s.Verbs,
	}
	if s.Group != parent.Group || s.Version != parent.Version {
		out.Group, out.Version = s.Group, s.Version
	}
	return out
}

func sortAPIResources(rs []metav1.APIResource) {
	slices.SortFunc(rs, func(a, b metav1.APIResource) int { return strings.Compare(a.Name, b.Name) })
}

// storageVersionHash is kube-apiserver's hash of the storage version of a
// resource: base64 of the first 8 bytes of sha256("<group>/<version>/<kind>").
// litek8s stores every resource in the version it serves it in.
func storageVersionHash(group, version, kind string) string {
	sum := sha256.Sum256([]byte(group + "/" + version + "/" + kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}
