package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	openapierrors "k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"

	"github.com/litek8s/litek8s/internal/api/crdvalidation"
	"github.com/litek8s/litek8s/internal/api/registry"
)

// withSchema sets the pruning, defaulting and validation of a CRD version's
// structural schema on r. It uses apiextensions' structural schema and
// pruning and kube-openapi's validator directly. The schema's CEL rules
// (x-kubernetes-validations) are those rules returns for it (crdvalidation;
// rules may be nil: none are evaluated).
func withSchema(r *registry.Resource, v *apiextv1.CustomResourceDefinitionVersion,
	rules func(*structuralschema.Structural) *crdvalidation.Rules) error {
	props, err := internalSchema(v)
	if err != nil || props == nil {
		return err
	}
	st, err := structuralschema.NewStructural(props)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(v.Schema.OpenAPIV3Schema)
	if err != nil {
		return err
	}
	var sch spec.Schema
	if err := json.Unmarshal(raw, &sch); err != nil {
		return err
	}
	validator := validate.NewSchemaValidator(&sch, nil, "", strfmt.Default)
	r.Schema = &sch
	r.UnknownFields = func(obj runtime.Object) []string {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return nil
		}
		o := runtime.DeepCopyJSON(u.Object)
		paths := unknownMetaFields(o, st)
		return append(paths, pruning.PruneWithOptions(o, st, true,
			structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
	}
	r.Normalize = func(obj runtime.Object) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			pruning.Prune(u.Object, st, true)
			applyDefaults(u.Object, st)
		}
	}
	if hasDefaults(st) {
		r.DefaultOnRead = func(raw []byte) []byte { return defaultRaw(raw, st) }
	}
	r.Validate = func(obj, _ runtime.Object) field.ErrorList {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return nil
		}
		return schemaErrors(validator.Validate(u.UnstructuredContent()))
	}
	if rules == nil {
		return nil
	}
	if cr := rules(st); cr != nil {
		r.ValidateContext = func(ctx context.Context, obj, old runtime.Object) field.ErrorList {
			u, ok := obj.(*unstructured.Unstructured)
			if !ok {
				return nil
			}
			var oldObj map[string]any
			if ou, ok := old.(*unstructured.Unstructured); ok {
				oldObj = ou.Object
			}
			return cr.Validate(ctx, u.Object, oldObj)
		}
	}
	return nil
}

// applyDefaults sets the schema's default values where x has no value,
// walking objects, maps and arrays like kube's structural defaulting; it
// reports whether it set any.
func applyDefaults(x any, s *structuralschema.Structural) bool {
	if s == nil {
		return false
	}
	changed := false
	switch x := x.(type) {
	case map[string]any:
		for name, prop := range s.Properties {
			if _, set := x[name]; !set && prop.Default.Object != nil {
				x[name] = runtime.DeepCopyJSONValue(prop.Default.Object)
				changed = true
			}
		}
		for name, val := range x {
			if prop, ok := s.Properties[name]; ok {
				changed = applyDefaults(val, &prop) || changed
			} else if ap := s.AdditionalProperties; ap != nil && ap.Structural != nil {
				changed = applyDefaults(val, ap.Structural) || changed
			}
		}
	case []any:
		for _, item := range x {
			changed = applyDefaults(item, s.Items) || changed
		}
	}
	return changed
}

// missesDefault reports whether applyDefaults would set anything in v:
// some property of an object with a default is absent, here or below.
func missesDefault(v gjson.Result, s *structuralschema.Structural) bool {
	if s == nil {
		return false
	}
	missing := false
	switch {
	case v.IsObject():
		present := 0 // properties with a default that v has
		v.ForEach(func(k, val gjson.Result) bool {
			if prop, ok := s.Properties[k.Str]; ok {
				if prop.Default.Object != nil {
					present++
				}
				missing = missesDefault(val, &prop)
			} else if ap := s.AdditionalProperties; ap != nil && ap.Structural != nil {
				missing = missesDefault(val, ap.Structural)
			}
			return !missing
		})
		if !missing {
			for _, prop := range s.Properties {
				if prop.Default.Object != nil {
					present--
				}
			}
			missing = present < 0
		}
	case v.IsArray():
		v.ForEach(func(_, item gjson.Result) bool {
			missing = missesDefault(item, s.Items)
			return !missing
		})
	}
	return missing
}

// hasDefaults reports whether s declares a default anywhere.
func hasDefaults(s *structuralschema.Structural) bool {
	if s == nil {
		return false
	}
	if s.Default.Object != nil {
		return true
	}
	for _, p := range s.Properties {
		if hasDefaults(&p) {
			return true
		}
	}
	if ap := s.AdditionalProperties; ap != nil && hasDefaults(ap.Structural) {
		return true
	}
	return hasDefaults(s.Items)
}

// defaultRaw returns the stored object raw with the schema's defaults
// applied: raw itself when none is missing (or it does not decode, which
// a stored object always does). Keys come out sorted and numbers as
// written, as the stored bytes are.
func defaultRaw(raw []byte, s *structuralschema.Structural) []byte {
	if len(raw) == 0 || !missesDefault(gjson.Parse(unsafe.String(&raw[0], len(raw))), s) {
		return raw // the common case, read without decoding
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var obj map[string]any
	if d.Decode(&obj) != nil || !applyDefaults(obj, s) {
		return raw
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return raw
	}
	return out
}

// schemaErrors turns kube-openapi's validation result into field errors
// worded like kube's ("spec.size: Invalid value: \"big\": spec.size in
// body must be of type integer: \"string\"").
func schemaErrors(res *validate.Result) field.ErrorList {
	if res == nil || res.IsValid() {
		return nil
	}
	var errs field.ErrorList
	for _, e := range res.Errors {
		var ve *openapierrors.Validation
		if !errors.As(e, &ve) {
			errs = append(errs, field.Invalid(field.NewPath(""), nil, e.Error()))
			continue
		}
		path := field.NewPath(strings.TrimPrefix(ve.Name, "."))
		if ve.Name == "" || ve.Name == "." {
			path = field.NewPath("<root>")
		}
		switch ve.Code() { // the error types kube gives them (they block CEL rules)
		case openapierrors.RequiredFailCode:
			errs = append(errs, field.Required(path, ""))
		case openapierrors.EnumFailCode:
			errs = append(errs, field.NotSupported(path, ve.Value, enumStrings(ve.Values)))
		case openapierrors.TooLongFailCode:
			errs = append(errs, field.TooLong(path, "", int(int64Of(ve.Valid))))
		case openapierrors.MaxItemsFailCode, openapierrors.TooManyPropertiesCode:
			errs = append(errs, field.TooMany(path, int(int64Of(ve.Value)), int(int64Of(ve.Valid))))
		case openapierrors.InvalidTypeCode:
			errs = append(errs, field.TypeInvalid(path, ve.Value, ve.Error()))
		default:
			errs = append(errs, field.Invalid(path, ve.Value, ve.Error()))
		}
	}
	return errs
}

// int64Of is the limit or size a kube-openapi error carries (-1 when it
// has none, as kube reports it).
func int64Of(v any) int64 {
	if i, ok := v.(int64); ok {
		return i
	}
	return -1
}

func enumStrings(vals []any) []string {
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		b, _ := json.Marshal(v)
		out = append(out, string(b))
	}
	return out
}
