package registry

import (
	"errors"
	"strings"

	"github.com/tidwall/gjson"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/litek8s/litek8s/internal/kv"
)

// Field selectors on custom resources (a CRD version's selectableFields),
// as apiextensions-apiserver serves them: a selector may use
// metadata.name, metadata.namespace (namespaced kinds) and each selectable
// field, named by its JSON path without the leading dot; any other label
// is a 400 "field label not supported: <label>". A field's value is its
// string, boolean or integer as written, "" when absent.
//
// Built-in kinds' values are computed at apply time (Derive), which does
// not know CRDs; a custom resource's are read from the object when a
// selector on them is matched (selector.computed), as its printer columns
// are evaluated when a Table is served.

// maxSelectableFields is kube's MaxSelectableFields.
const maxSelectableFields = 8

// CustomFieldSelectors builds the field selectors of one served version of
// a CRD.
func CustomFieldSelectors(namespaced bool, sfs []apiextv1.SelectableField) *FieldSelectors {
	meta := metaName
	if namespaced {
		meta = metaNameNamespace
	}
	var values []fieldValue
	for _, sf := range sfs {
		segs, err := selectablePath(sf.JSONPath)
		if err != nil || len(values) == maxSelectableFields {
			continue // validateCRD refuses such fields
		}
		for i := range segs {
			segs[i] = gjson.Escape(segs[i])
		}
		values = append(values, fieldValue{name: strings.TrimPrefix(sf.JSONPath, "."),
			paths: []string{strings.Join(segs, ".")}, conv: convScalar})
	}
	return selectable(meta, labelNotSupported, values...)
}

// selectablePath splits a selectable field's JSON path (".spec.color";
// kube allows no array notation) into its member names.
func selectablePath(p string) ([]string, error) {
	if !strings.HasPrefix(p, ".") {
		return nil, errors.New("expected [ or . but got: " + strings.SplitN(p, ".", 2)[0])
	}
	segs := strings.Split(p[1:], ".")
	for _, s := range segs {
		if strings.ContainsAny(s, "[]") {
			return nil, errors.New("array notation is not allowed")
		}
		if s == "" {
			return nil, errors.New("unexpected end of JSON path")
		}
	}
	return segs, nil
}

// ValidateSelectableFields is kube's ValidateCustomResourceSelectableFields
// for one version: each path names a string, boolean or integer field of
// the schema outside metadata, once; at most eight of them.
func ValidateSelectableFields(v *apiextv1.CustomResourceDefinitionVersion, s *structuralschema.Structural, path *field.Path) field.ErrorList {
	if len(v.SelectableFields) == 0 {
		return nil
	}
	if s == nil {
		return field.ErrorList{field.Invalid(path, "", "may only be set when `version.schema.openAPIV3Schema` is not included")}
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, sf := range v.SelectableFields {
		p := path.Index(i).Child("jsonPath")
		if sf.JSONPath == "" {
			errs = append(errs, field.Required(p, ""))
			continue
		}
		segs, found, err := walkSchema(sf.JSONPath, s)
		if err != nil {
			errs = append(errs, field.Invalid(p, sf.JSONPath, "is an invalid path: "+err.Error()))
			continue
		}
		if segs[0] == "metadata" {
			errs = append(errs, field.Invalid(p, sf.JSONPath, "must not point to fields in metadata"))
		}
		if t := found.Type; t != "string" && t != "boolean" && t != "integer" {
			errs = append(errs, field.Invalid(p, sf.JSONPath,
				"must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."))
		}
		if key := strings.Join(segs, "."); seen[key] {
			errs = append(errs, field.Duplicate(p, sf.JSONPath))
		} else {
			seen[key] = true
		}
	}
	if len(seen) > maxSelectableFields {
		errs = append(errs, field.TooMany(path, len(seen), maxSelectableFields))
	}
	return errs
}

// walkSchema follows a selectable path through a structural schema, into
// properties and map values, and returns the schema it ends at.
func walkSchema(p string, s *structuralschema.Structural) ([]string, *structuralschema.Structural, error) {
	segs, err := selectablePath(p)
	if err != nil {
		return nil, nil, err
	}
	for _, seg := range segs {
		switch {
		case s.Properties != nil:
			next, ok := s.Properties[seg]
			if !ok {
				return nil, nil, errors.New("does not refer to a valid field")
			}
			s = &next
		case s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil:
			s = s.AdditionalProperties.Structural
		default:
			return nil, nil, errors.New("does not refer to a valid field")
		}
	}
	return segs, s, nil
}

// CustomFields computes the field set of a custom resource: its name,
// its namespace and its selectable fields, read path by path (at most
// eight; derive's two-scan plan compares member names unescaped, and a
// CRD's property names may hold characters a gjson path escapes).
func (fs *FieldSelectors) CustomFields(obj *kv.Object) fields.Set {
	set := make(fields.Set, len(fs.values)+2)
	set["metadata.name"], set["metadata.namespace"] = obj.Key.Name, obj.Key.Namespace
	for i := range fs.values {
		v := &fs.values[i]
		set[v.name] = v.render(gjson.GetBytes(obj.Raw, v.paths[0]))
	}
	return set
}
