package openapi

import (
	"encoding/json"
	"fmt"
	"reflect"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// use is the schema of a value of Go type t where it is used (a property,
// array items, map values): a reference for named structs, an inline
// schema otherwise. Pointers are described by what they point to.
func (b *schemaBuilder) use(t reflect.Type) (spec.Schema, error) {
	t = derefType(t)
	switch t.Kind() {
	case reflect.Struct:
		if t.Name() == "" {
			return spec.Schema{}, fmt.Errorf("openapi: anonymous struct %v: %w", t, ErrUnsupportedType)
		}
		name, err := b.define(t)
		if err != nil {
			return spec.Schema{}, err
		}
		return *spec.RefSchema(refTo(name)), nil
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			return typed("string", "byte"), nil // encoding/json: base64
		}
		items, err := b.use(t.Elem())
		if err != nil {
			return spec.Schema{}, err
		}
		s := typed("array", "")
		s.Items = &spec.SchemaOrArray{Schema: &items}
		return s, nil
	case reflect.Map:
		return b.useMap(t)
	case reflect.Interface:
		return typed("object", ""), nil
	}
	return primitive(t)
}

// useMap is the schema of a map: an object whose additionalProperties
// describe the values. Only string keys serialize as JSON object keys.
func (b *schemaBuilder) useMap(t reflect.Type) (spec.Schema, error) {
	if t.Key().Kind() != reflect.String {
		return spec.Schema{}, fmt.Errorf("openapi: map key %v: %w", t.Key(), ErrUnsupportedType)
	}
	values, err := b.use(t.Elem())
	if err != nil {
		return spec.Schema{}, err
	}
	s := typed("object", "")
	s.AdditionalProperties = &spec.SchemaOrBool{Allows: true, Schema: &values}
	return s, nil
}

// primitive is the schema of a boolean, string or number kind, with kube's
// formats.
func primitive(t reflect.Type) (spec.Schema, error) {
	switch t.Kind() {
	case reflect.Bool:
		return typed("boolean", ""), nil
	case reflect.String:
		return typed("string", ""), nil
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint8, reflect.Uint16:
		return typed("integer", "int32"), nil
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64:
		return typed("integer", "int64"), nil
	case reflect.Float32:
		return typed("number", "float"), nil
	case reflect.Float64:
		return typed("number", "double"), nil
	}
	return spec.Schema{}, fmt.Errorf("openapi: %v (%v): %w", t, t.Kind(), ErrUnsupportedType)
}

func typed(typ, format string) spec.Schema {
	return spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{typ}, Format: format}}
}

// zeroDefault is the default of a field whose type the merge schema does
// not know, by the rule kube's generator follows: a non-pointer struct
// defaults to {} unless it marshals itself (Time, Quantity, RawExtension),
// a required non-pointer scalar to its zero value.
func zeroDefault(f jsonField) any {
	t := f.typ
	switch {
	case t.Kind() == reflect.Pointer:
		return nil
	case t.Kind() == reflect.Struct:
		if reflect.PointerTo(t).Implements(reflect.TypeFor[json.Marshaler]()) {
			return nil
		}
		return map[string]any{}
	case f.omitempty:
		return nil
	}
	switch t.Kind() {
	case reflect.String:
		return ""
	case reflect.Bool:
		return false
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return 0
	}
	return nil
}
