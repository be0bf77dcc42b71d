package api

import (
	"net/http"
	"reflect"

	"github.com/litek8s/litek8s/internal/api/discovery"
	"github.com/litek8s/litek8s/internal/api/openapi"
)

// registerDiscovery serves API discovery and OpenAPI v3, both generated
// from the registry.
func (s *Server) registerDiscovery(mux *http.ServeMux) error {
	var res []discovery.Resource
	var kinds []openapi.Kind
	for _, r := range s.reg.all {
		res = append(res, discovery.Resource{Group: r.Group, Version: r.Version, Resource: r.Resource,
			Singular: r.Singular, Kind: r.Kind, Namespaced: r.Namespaced, ShortNames: r.ShortNames,
			Categories: r.Categories, Verbs: servedVerbs})
		kinds = append(kinds, openapi.Kind{Group: r.Group, Version: r.Version, Resource: r.Resource, Kind: r.Kind,
			Namespaced: r.Namespaced, Type: r.goType(), ListType: reflect.TypeOf(r.NewList()).Elem(), Verbs: servedVerbs})
	}
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
