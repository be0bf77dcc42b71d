package openapi

import (
	"bytes"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"github.com/munnerz/goautoneg"
	"google.golang.org/protobuf/proto"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// OpenAPI v2 (/openapi/v2): one Swagger 2.0 document of every served kind,
// for the clients that still read it (kubectl explain
// --output=plaintext-openapiv2, older kubectl validation, Helm's schema
// checks). It is converted from the v3 documents, so both describe the same
// schemas: references move from #/components/schemas to #/definitions, a
// reference wrapped in allOf (v3's way to carry a description) becomes a
// plain $ref with its description, oneOf scalars (IntOrString, Quantity)
// become strings with their format, request bodies become "body"
// parameters and media types become consumes/produces. It is served as
// JSON or, for Accept application/com.github.proto-openapi.spec.v2@v1.0+protobuf
// (what client-go's discovery asks for), as gnostic's protobuf message, as
// kube-openapi serves it. Both are built on the first request and kept.

const (
	v2Protobuf           = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	v2ProtobufDeprecated = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
)

// v2Document is the lazily built v2 document of a Handler.
type v2Document struct {
	once     sync.Once
	json, pb []byte
	hash     string
	err      error
	v3       map[string]document // the v3 documents it is built from
}

func (d *v2Document) build(version string) {
	d.once.Do(func() {
		sw, err := swaggerOf(d.v3, version)
		if err == nil {
			d.json, err = json.Marshal(sw)
		}
		if err == nil {
			var doc *openapi_v2.Document
			if doc, err = openapi_v2.ParseDocument(d.json); err == nil {
				d.pb, err = proto.Marshal(doc)
			}
		}
		if err != nil {
			d.err = fmt.Errorf("openapi: v2 document: %w", err)
			return
		}
		d.hash = fmt.Sprintf("%X", sha512.Sum512(d.json))
	})
}

// serveV2 answers /openapi/v2 in the first format of the Accept header
// that it serves (JSON when there is none), 406 otherwise.
func (h *Handler) serveV2(w http.ResponseWriter, r *http.Request) {
	accept := r.Header.Get("Accept")
	if accept == "" {
		accept = "*/*"
	}
	w.Header().Add("Vary", "Accept")
	for _, c := range goautoneg.ParseAccept(accept) {
		var pb bool
		switch mt := c.Type + "/" + c.SubType; {
		case mt == "application/json", mt == "application/*", mt == "*/*":
		case mt == v2Protobuf, mt == v2ProtobufDeprecated:
			pb = true
		default:
			continue
		}
		set := h.loadOr500(w)
		if set == nil {
			return
		}
		v2 := set.v2
		v2.build(serverVersion())
		if v2.err != nil {
			http.Error(w, v2.err.Error(), http.StatusServiceUnavailable)
			return
		}
		body, ct := v2.json, "application/json"
		if pb {
			body, ct = v2.pb, v2Protobuf
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Cache-Control", "no-cache, private")
		w.Header().Set("Etag", strconv.Quote(v2.hash))
		http.ServeContent(w, r, "", set.lastModified, bytes.NewReader(body))
		return
	}
	w.WriteHeader(http.StatusNotAcceptable)
}

// swaggerOf merges the v3 documents into one v2 document.
func swaggerOf(docs map[string]document, version string) (*spec.Swagger, error) {
	sw := &spec.Swagger{SwaggerProps: spec.SwaggerProps{
		Swagger:     "2.0",
		Info:        &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: version}},
		Paths:       &spec.Paths{Paths: map[string]spec.PathItem{}},
		Definitions: spec.Definitions{},
		SecurityDefinitions: spec.SecurityDefinitions{"BearerToken": {SecuritySchemeProps: spec.SecuritySchemeProps{
			Type: "apiKey", Name: "authorization", In: "header", Description: "Bearer Token authentication"}}},
		Security: []map[string][]string{{"BearerToken": {}}},
	}}
	for _, key := range slices.Sorted(maps.Keys(docs)) {
		var v3 spec3.OpenAPI
		if err := json.Unmarshal(docs[key].body, &v3); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		if v3.Components != nil {
			for name, s := range v3.Components.Schemas {
				sw.Definitions[name] = *v2Schema(s)
			}
		}
		if v3.Paths != nil {
			for p, item := range v3.Paths.Paths {
				sw.Paths.Paths[p] = v2PathItem(item)
			}
		}
	}
	return sw, nil
}

// v2Schema converts a v3 schema (components or inline) to v2.
func v2Schema(in *spec.Schema) *spec.Schema {
	if in == nil {
		return nil
	}
	out := *in
	if len(out.AllOf) == 1 && out.AllOf[0].Ref.String() != "" && len(out.Properties) == 0 {
		// {"allOf":[{"$ref":…}],"description":…,"default":…}: v2 keeps the
		// description beside the reference and has no default for it.
		out.Ref, out.AllOf, out.Default = out.AllOf[0].Ref, nil, nil
	}
	if ref := out.Ref.String(); ref != "" {
		out.Ref = spec.MustCreateRef(strings.Replace(ref, "#/components/schemas/", "#/definitions/", 1))
	}
	if len(out.OneOf) > 0 && len(out.Type) == 0 { // IntOrString, Quantity
		out.OneOf, out.Type = nil, spec.StringOrArray{"string"}
	}
	out.Nullable = false
	out.AllOf = v2Schemas(out.AllOf)
	out.OneOf = v2Schemas(out.OneOf)
	out.AnyOf = v2Schemas(out.AnyOf)
	if out.Properties != nil {
		props := make(map[string]spec.Schema, len(out.Properties))
		for k, p := range out.Properties {
			props[k] = *v2Schema(&p)
		}
		out.Properties = props
	}
	if out.Items != nil {
		out.Items = &spec.SchemaOrArray{Schema: v2Schema(out.Items.Schema), Schemas: v2Schemas(out.Items.Schemas)}
	}
	if ap := out.AdditionalProperties; ap != nil {
		out.AdditionalProperties = &spec.SchemaOrBool{Allows: ap.Allows, Schema: v2Schema(ap.Schema)}
	}
	return &out
}

func v2Schemas(in []spec.Schema) []spec.Schema {
	if in == nil {
		return nil
	}
	out := make([]spec.Schema, len(in))
	for i := range in {
		out[i] = *v2Schema(&in[i])
	}
	return out
}

func v2PathItem(in *spec3.Path) spec.PathItem {
	item := spec.PathItem{VendorExtensible: in.VendorExtensible, PathItemProps: spec.PathItemProps{
		Get: v2Operation(in.Get), Put: v2Operation(in.Put), Post: v2Operation(in.Post),
		Delete: v2Operation(in.Delete), Patch: v2Operation(in.Patch), Head: v2Operation(in.Head),
		Options: v2Operation(in.Options),
	}}
	for _, p := range in.Parameters {
		item.Parameters = append(item.Parameters, v2Parameter(p))
	}
	return item
}

func v2Operation(in *spec3.Operation) *spec.Operation {
	if in == nil {
		return nil
	}
	op := &spec.Operation{VendorExtensible: in.VendorExtensible, OperationProps: spec.OperationProps{
		Description: in.Description, Tags: in.Tags, Summary: in.Summary, ID: in.OperationId,
		Deprecated: in.Deprecated, Schemes: []string{"https"},
	}}
	if rb := in.RequestBody; rb != nil {
		op.Consumes = slices.Sorted(maps.Keys(rb.Content))
		body := spec.Parameter{ParamProps: spec.ParamProps{Name: "body", In: "body", Required: rb.Required}}
		for _, mt := range op.Consumes {
			body.Schema = v2Schema(rb.Content[mt].Schema)
			break
		}
		op.Parameters = append(op.Parameters, body)
	}
	for _, p := range in.Parameters {
		op.Parameters = append(op.Parameters, v2Parameter(p))
	}
	op.Responses = &spec.Responses{ResponsesProps: spec.ResponsesProps{StatusCodeResponses: map[int]spec.Response{}}}
	if in.Responses != nil {
		for code, r := range in.Responses.StatusCodeResponses {
			resp := spec.Response{ResponseProps: spec.ResponseProps{Description: r.Description}}
			types := slices.Sorted(maps.Keys(r.Content))
			if len(types) > 0 {
				resp.Schema = v2Schema(r.Content[types[0]].Schema)
				if len(op.Produces) == 0 {
					op.Produces = types
				}
			}
			op.Responses.StatusCodeResponses[code] = resp
		}
	}
	return op
}

// v2Parameter converts a path or query parameter: its schema becomes the
// parameter's own type.
func v2Parameter(in *spec3.Parameter) spec.Parameter {
	p := spec.Parameter{VendorExtensible: in.VendorExtensible, ParamProps: spec.ParamProps{
		Name: in.Name, In: in.In, Description: in.Description, Required: in.Required,
		AllowEmptyValue: in.AllowEmptyValue,
	}}
	if s := in.Schema; s != nil {
		if len(s.Type) > 0 {
			p.Type = s.Type[0]
		}
		p.Format, p.UniqueItems = s.Format, s.UniqueItems
	}
	return p
}
