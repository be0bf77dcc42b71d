package api

import (
	"k8s.io/kube-openapi/pkg/validation/spec"
	"net/http"
	"reflect"

	"github.com/litek8s/litek8s/internal/api/discovery"
	"github.com/litek8s/litek8s/internal/api/openapi"
	"github.com/litek8s/litek8s/internal/api/registry"
)

// setRegistry makes reg the served registry, with discovery and OpenAPI
// documents generated from it. Safe to call while serving.
func (s *Server) setRegistry(reg *registry.Registry) error {
	mux := http.NewServeMux()
	if err := s.registerSchemas(mux, reg); err != nil {
		return err
	}
	s.reg.Store(reg)
	s.schemas.Store(mux)
	s.metrics.forget() // routes of the old rows
	return nil
}

// registerSchemas serves API discovery and OpenAPI v3 for reg on mux.
func (s *Server) registerSchemas(mux *http.ServeMux, reg *registry.Registry) error {
	var res []discovery.Resource
	var kinds []openapi.Kind
	for _, r := range reg.All() {
		res = append(res, discovery.Resource{Group: r.Group, Version: r.Version, Resource: r.Resource,
			Singular: r.Singular, Kind: r.Kind, Namespaced: r.Namespaced, ShortNames: r.ShortNames,
			Categories: r.Categories, Verbs: r.ServedVerbs(), Subresources: subresources(r), KeepVerbOrder: r.Custom})
		k := openapi.Kind{Group: r.Group, Version: r.Version, Resource: r.Resource, Kind: r.Kind,
			Namespaced: r.Namespaced, Verbs: r.ServedVerbs()}
		if t := r.GoType(); t != nil {
			k.Type, k.ListType = t, reflect.TypeOf(r.NewList()).Elem()
		} else {
			k.Schema, k.ListKind = r.Schema, r.ListKind
			if k.Schema == nil {
				k.Schema = &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}}}
				k.Schema.AddExtension("x-kubernetes-preserve-unknown-fields", true)
			}
		}
		kinds = append(kinds, k)
	}
	res = append(res, s.aggDisco.Load().rows...) // aggregate.go
	dc := discovery.DefaultConfig()
	dc.Logger = s.log
	dh, err := discovery.New(dc, res)
	if err != nil {
		return err
	}
	dh.Register(mux)
	oh, err := openapi.New(kinds)
	if err != nil {
		return err
	}
	oh.Register(mux)
	return nil
}

// subresources lists what discovery announces for r's subresources.
func subresources(r *registry.Resource) []discovery.Subresource {
	var out []discovery.Subresource
	if r.Approval {
		out = append(out, discovery.Subresource{Name: "approval", Verbs: []string{"get", "patch", "update"}})
	}
	if r.Status {
		out = append(out, discovery.Subresource{Name: "status", Verbs: []string{"get", "patch", "update"}})
	}
	if r.Scale != nil {
		out = append(out, discovery.Subresource{Name: "scale", Group: "autoscaling", Version: "v1", Kind: "Scale",
			Verbs: []string{"get", "patch", "update"}})
	}
	if r.Binding {
		out = append(out, discovery.Subresource{Name: "binding", Version: "v1", Kind: "Binding", Verbs: []string{"create"}})
	}
	if r.TokenRequest {
		out = append(out, discovery.Subresource{Name: "token", Group: "authentication.k8s.io", Version: "v1",
			Kind: "TokenRequest", Verbs: []string{"create"}})
	}
	if r.PodSubresources {
		for _, sub := range []string{"ephemeralcontainers", "resize"} {
			out = append(out, discovery.Subresource{Name: sub, Verbs: []string{"get", "patch", "update"}})
		}
	}
	if r.Eviction {
		out = append(out, discovery.Subresource{Name: "eviction", Group: "policy", Version: "v1", Kind: "Eviction",
			Verbs: []string{"create"}})
	}
	if isConnect(r, "proxy") || isConnect(r, "log") {
		out = append(out, connectDiscovery(r)...)
	}
	return out
}
