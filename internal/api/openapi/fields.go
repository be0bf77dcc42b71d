package openapi

import (
	"reflect"
	"strings"
)

// swaggerDocumenter is implemented by the k8s.io/api types
// (types_swagger_doc_generated.go): "" describes the type, every other key
// a field by its json name.
type swaggerDocumenter interface{ SwaggerDoc() map[string]string }

// docsOf returns the descriptions of struct type t, or nil.
func docsOf(t reflect.Type) map[string]string {
	if d, ok := reflect.Zero(t).Interface().(swaggerDocumenter); ok {
		return d.SwaggerDoc()
	}
	return nil
}

// jsonField is one property of a struct as encoding/json sees it.
type jsonField struct {
	name          string
	typ           reflect.Type
	omitempty     bool // omitempty or omitzero: the field is optional
	doc           string
	patchStrategy string // struct tag patchStrategy
	patchMergeKey string // struct tag patchMergeKey
}

// jsonFields lists the json properties of struct type t in declaration
// order, with embedded structs without a json name (",inline") flattened in
// after t's own fields. A flattened field never shadows an outer one.
func jsonFields(t reflect.Type) []jsonField {
	docs := docsOf(t)
	var own, inlined []jsonField
	for i := range t.NumField() {
		sf := t.Field(i)
		name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		if sf.Anonymous && name == "" {
			if et := derefType(sf.Type); et.Kind() == reflect.Struct {
				inlined = append(inlined, jsonFields(et)...)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		own = append(own, jsonField{
			name:          name,
			typ:           sf.Type,
			omitempty:     hasOption(opts, "omitempty") || hasOption(opts, "omitzero"),
			doc:           docs[name],
			patchStrategy: sf.Tag.Get("patchStrategy"),
			patchMergeKey: sf.Tag.Get("patchMergeKey"),
		})
	}
	return appendUnshadowed(own, inlined)
}

func appendUnshadowed(own, inlined []jsonField) []jsonField {
	for _, f := range inlined {
		shadowed := false
		for _, o := range own {
			shadowed = shadowed || o.name == f.name
		}
		if !shadowed {
			own = append(own, f)
		}
	}
	return own
}

func hasOption(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}

func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}
