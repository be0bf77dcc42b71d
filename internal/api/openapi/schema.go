package openapi

import (
	"fmt"
	"reflect"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// scalarTyper is implemented by struct types that serialize as a scalar
// (metav1.Time, MicroTime, Duration, resource.Quantity, intstr.IntOrString).
type scalarTyper interface {
	OpenAPISchemaType() []string
	OpenAPISchemaFormat() string
}

// oneOfTyper is implemented by types whose v3 schema is a oneOf of types
// (Quantity: string or number; IntOrString: integer or string).
type oneOfTyper interface{ OpenAPIV3OneOfTypes() []string }

// schemaBuilder collects the components/schemas of one document. Every
// named struct type becomes a definition; everything else is inlined where
// it is used. Not safe for concurrent use; New uses one per document.
type schemaBuilder struct {
	defs  map[string]*spec.Schema
	types map[string]reflect.Type // the Go type behind each definition name
	hints *mergeHints
}

func newSchemaBuilder(hints *mergeHints) *schemaBuilder {
	return &schemaBuilder{
		defs:  make(map[string]*spec.Schema),
		types: make(map[string]reflect.Type),
		hints: hints,
	}
}

// define adds the definition of struct type t, and of every type it
// reaches, and returns its name. A type already defined (or being defined:
// recursive types) is not walked again.
func (b *schemaBuilder) define(t reflect.Type) (string, error) {
	name := definitionName(t)
	if prev, ok := b.types[name]; ok {
		if prev != t {
			return "", fmt.Errorf("openapi: %v and %v are both named %s: %w", prev, t, name, ErrUnsupportedType)
		}
		return name, nil
	}
	b.types[name] = t
	s, err := b.structSchema(t, name)
	if err != nil {
		return "", err
	}
	b.defs[name] = s
	return name, nil
}

// structSchema is the definition of struct type t named name.
func (b *schemaBuilder) structSchema(t reflect.Type, name string) (*spec.Schema, error) {
	s := scalarSchema(t)
	if s == nil {
		s = &spec.Schema{}
		s.Type = spec.StringOrArray{"object"}
		if err := b.addProperties(s, t, name); err != nil {
			return nil, err
		}
		b.hints.decorateType(name, s)
	}
	s.Description = docsOf(t)[""]
	return s, nil
}

// scalarSchema is the schema of a struct type that serializes as a scalar,
// or nil for an ordinary struct.
func scalarSchema(t reflect.Type) *spec.Schema {
	st, ok := reflect.Zero(t).Interface().(scalarTyper)
	if !ok {
		return nil
	}
	s := &spec.Schema{}
	s.Format = st.OpenAPISchemaFormat()
	if oo, ok := st.(oneOfTyper); ok {
		for _, typ := range oo.OpenAPIV3OneOfTypes() {
			s.OneOf = append(s.OneOf, typed(typ, ""))
		}
		return s
	}
	s.Type = st.OpenAPISchemaType()
	return s
}

// addProperties fills the properties and required list of the definition
// name of struct type t.
func (b *schemaBuilder) addProperties(s *spec.Schema, t reflect.Type, name string) error {
	for _, f := range jsonFields(t) {
		p, err := b.property(name, f)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", name, f.name, err)
		}
		if s.Properties == nil {
			s.Properties = make(map[string]spec.Schema)
		}
		s.Properties[f.name] = p
		if !f.omitempty {
			s.Required = append(s.Required, f.name)
		}
	}
	return nil
}

// property is the schema of field f of definition typeName: its type
// (a reference to a definition is wrapped in allOf, as kube does, so that
// it can carry a description and a default), description, default and
// the x-kubernetes extensions that drive merging.
func (b *schemaBuilder) property(typeName string, f jsonField) (spec.Schema, error) {
	s, err := b.use(f.typ)
	if err != nil {
		return spec.Schema{}, err
	}
	if s.Ref.String() != "" {
		s = spec.Schema{SchemaProps: spec.SchemaProps{AllOf: []spec.Schema{s}}}
	}
	s.Description = f.doc
	hint := b.hints.field(typeName, f.name)
	if hint.known {
		s.Default = hint.def
	} else {
		s.Default = zeroDefault(f)
	}
	addExtension(&s, "x-kubernetes-list-map-keys", hint.listMapKeys)
	addExtension(&s, "x-kubernetes-list-type", hint.listType)
	addExtension(&s, "x-kubernetes-map-type", hint.mapType)
	addExtension(&s, "x-kubernetes-patch-merge-key", f.patchMergeKey)
	addExtension(&s, "x-kubernetes-patch-strategy", f.patchStrategy)
	return s, nil
}

// addExtension sets a vendor extension unless v is empty.
func addExtension[T string | []string](s *spec.Schema, key string, v T) {
	if len(v) > 0 {
		s.AddExtension(key, v)
	}
}
