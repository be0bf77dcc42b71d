package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apiextinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/litek8s/litek8s/internal/api/crdconversion"
	"github.com/litek8s/litek8s/internal/api/crdvalidation"
	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
)

// CustomResourceDefinitions: a CRD is a stored object like any other; every
// member serves the resources it defines as soon as it has applied it. The
// registry records the revision of the CRD table it was built from; a
// request that misses the registry, any custom-resource request and any
// discovery or OpenAPI request first checks that revision against the
// store and rebuilds the registry when CRDs changed (refreshCRDs).

// crdStoreKey is the store's resource name of CRDs.
const crdStoreKey = "customresourcedefinitions.apiextensions.k8s.io"

// crdKinds returns the registry row of CustomResourceDefinition itself.
func crdKinds() []*registry.Resource {
	return []*registry.Resource{{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions",
		Singular: "customresourcedefinition", Kind: "CustomResourceDefinition", ShortNames: []string{"crd", "crds"},
		Categories: []string{"api-extensions"},
		New:        registry.NewOf[apiextv1.CustomResourceDefinition](), NewList: registry.NewOf[apiextv1.CustomResourceDefinitionList](),
		Normalize: defaultCRD, Prepare: prepareCRD, Validate: validateCRD, ValidateContext: validateCRDRules,
		PrepareUpdate: prepareCRDUpdate, Status: true, HasGeneration: true}}
}

// prepareCRD fills what kube's apiextensions server sets: conversion
// None, the accepted names and stored versions, and the NamesAccepted and
// Established conditions (kube sets them within a second; litek8s serves a
// CRD as soon as it is applied, so it is established at once).
func prepareCRD(obj runtime.Object) {
	crd := obj.(*apiextv1.CustomResourceDefinition)
	defaultCRD(crd)
	crd.Status.AcceptedNames = crd.Spec.Names
	crd.Status.StoredVersions = nil
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			crd.Status.StoredVersions = append(crd.Status.StoredVersions, v.Name)
		}
	}
	now := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
	crd.Status.Conditions = []apiextv1.CustomResourceDefinitionCondition{
		{Type: apiextv1.NamesAccepted, Status: apiextv1.ConditionTrue, LastTransitionTime: now,
			Reason: "NoConflicts", Message: "no conflicts found"},
		{Type: apiextv1.Established, Status: apiextv1.ConditionTrue, LastTransitionTime: now,
			Reason: "InitialNamesAccepted", Message: "the initial names have been accepted"},
	}
}

// prepareCRDUpdate appends a new storage version to status.storedVersions,
// as kube's CRD strategy does: objects stored in the versions listed
// there may still exist (storage version migration removes them through
// /status).
func prepareCRDUpdate(obj, _ runtime.Object) {
	crd := obj.(*apiextv1.CustomResourceDefinition)
	for _, v := range crd.Spec.Versions {
		if v.Storage && !slices.Contains(crd.Status.StoredVersions, v.Name) {
			crd.Status.StoredVersions = append(crd.Status.StoredVersions, v.Name)
		}
	}
}

// defaultCRD is apiextensions' scheme defaulting (conversion None, the
// singular and list kind names); it runs on every write (Normalize).
func defaultCRD(obj runtime.Object) {
	crd := obj.(*apiextv1.CustomResourceDefinition)
	if crd.Spec.Conversion == nil {
		crd.Spec.Conversion = &apiextv1.CustomResourceConversion{Strategy: apiextv1.NoneConverter}
	}
	if w := crd.Spec.Conversion.Webhook; w != nil && w.ClientConfig != nil && w.ClientConfig.Service != nil && w.ClientConfig.Service.Port == nil {
		port := int32(443) // SetDefaults_ServiceReference
		w.ClientConfig.Service.Port = &port
	}
	n := crd.Spec.Names
	if n.Singular == "" {
		n.Singular = strings.ToLower(n.Kind)
	}
	if n.ListKind == "" {
		n.ListKind = n.Kind + "List"
	}
	crd.Spec.Names = n
}

// validateCRD checks what serving a CRD relies on.
func validateCRD(obj, old runtime.Object) field.ErrorList {
	crd := obj.(*apiextv1.CustomResourceDefinition)
	var errs field.ErrorList
	spec := field.NewPath("spec")
	n := crd.Spec.Names
	if n.Plural == "" {
		errs = append(errs, field.Required(spec.Child("names", "plural"), ""))
	}
	if n.Kind == "" {
		errs = append(errs, field.Required(spec.Child("names", "kind"), ""))
	}
	if crd.Spec.Group == "" {
		errs = append(errs, field.Required(spec.Child("group"), ""))
	}
	if want := n.Plural + "." + crd.Spec.Group; crd.Name != want {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), crd.Name,
			fmt.Sprintf("must be spec.names.plural+\".\"+spec.group")))
	}
	if s := crd.Spec.Scope; s != apiextv1.NamespaceScoped && s != apiextv1.ClusterScoped {
		errs = append(errs, field.NotSupported(spec.Child("scope"), s, []string{"Cluster", "Namespaced"}))
	}
	if old != nil {
		if o := old.(*apiextv1.CustomResourceDefinition); o.Spec.Scope != crd.Spec.Scope {
			errs = append(errs, field.Invalid(spec.Child("scope"), crd.Spec.Scope, "field is immutable"))
		}
	}
	storage := 0
	for i, v := range crd.Spec.Versions {
		vp := spec.Child("versions").Index(i)
		if v.Storage {
			storage++
		}
		s, err := structuralOf(&v)
		if err != nil {
			errs = append(errs, field.Invalid(vp.Child("schema", "openAPIV3Schema"), "", err.Error()))
		} else {
			errs = append(errs, registry.ValidateSelectableFields(&v, s, vp.Child("selectableFields"))...)
		}
	}
	errs = append(errs, crdconversion.ValidateConversion(crd)...)
	if len(crd.Spec.Versions) == 0 {
		errs = append(errs, field.Required(spec.Child("versions"), "must have exactly one version marked as storage version"))
	} else if storage != 1 {
		errs = append(errs, field.Invalid(spec.Child("versions"), storage, "must have exactly one version marked as storage version"))
	}
	return errs
}

// validateCRDRules refuses the x-kubernetes-validations rules kube refuses
// (crdvalidation.CRDErrors).
func validateCRDRules(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	var o *apiextv1.CustomResourceDefinition
	if old != nil {
		o = old.(*apiextv1.CustomResourceDefinition)
	}
	return crdvalidation.CRDErrors(ctx, obj.(*apiextv1.CustomResourceDefinition), o)
}

// structuralOf returns the structural schema of a CRD version (nil when it
// has none).
func structuralOf(v *apiextv1.CustomResourceDefinitionVersion) (*structuralschema.Structural, error) {
	props, err := internalSchema(v)
	if err != nil || props == nil {
		return nil, err
	}
	return structuralschema.NewStructural(props)
}

func internalSchema(v *apiextv1.CustomResourceDefinitionVersion) (*apiextinternal.JSONSchemaProps, error) {
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return nil, nil
	}
	out := &apiextinternal.JSONSchemaProps{}
	if err := apiextv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// refreshCRDs returns the current registry, rebuilt first when the stored
// CRDs changed since it was built.
func (s *Server) refreshCRDs(ctx context.Context) *registry.Registry {
	reg := s.registry()
	l, err := s.store.List(ctx, crdStoreKey, "", false)
	if err != nil || l.ModRev == reg.CRDRev {
		return reg
	}
	s.crdMu.Lock()
	defer s.crdMu.Unlock()
	if reg = s.registry(); reg.CRDRev == l.ModRev {
		return reg
	}
	rows := append([]*registry.Resource(nil), s.builtin...)
	l.Range("", func(obj *kv.Object) bool {
		crd := &apiextv1.CustomResourceDefinition{}
		if err := json.Unmarshal(obj.Raw, crd); err != nil {
			s.log.Error("stored CRD does not decode", "name", obj.Key.Name, "err", err)
			return true
		}
		if crd.DeletionTimestamp == nil {
			rows = append(rows, customResources(crd, &s.crdRules, crdconversion.New(crd, s.svc))...)
		}
		return true
	})
	s.crdRules.Done()
	next := registry.New(rows)
	next.CRDRev = l.ModRev
	if err := s.setRegistry(next); err != nil {
		s.log.Error("serving CRDs", "err", err)
		return reg
	}
	return next
}

// deleteCustomObjects deletes every object of the CRD stored in crd before
// the CRD itself goes (kube's CRD finalizer does this asynchronously).
func (s *Server) deleteCustomObjects(ctx context.Context, crd *kv.Object) error {
	var def apiextv1.CustomResourceDefinition
	if err := json.Unmarshal(crd.Raw, &def); err != nil {
		return fmt.Errorf("api: stored CRD %s: %w", crd.Key.Name, err)
	}
	key := def.Spec.Names.Plural + "." + def.Spec.Group
	l, err := s.store.List(ctx, key, "", false)
	if err != nil {
		return availabilityErr(err)
	}
	var ferr error
	l.Range("", func(obj *kv.Object) bool {
		_, err := s.store.Propose(ctx, kv.Write{Op: kv.OpDelete, Key: obj.Key, ExpectedUID: obj.UID})
		if err != nil && !errors.Is(err, kv.ErrNotFound) && !errors.Is(err, kv.ErrConflict) {
			ferr = availabilityErr(err)
		}
		return ferr == nil
	})
	return ferr
}
