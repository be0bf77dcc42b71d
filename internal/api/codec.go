package api

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/litek8s/litek8s/internal/api/registry"
)

// codecs decode request bodies of the served kinds.
type codecs struct {
	json, yaml *json.Serializer // strict: they report unknown and duplicate fields
	proto      *protobuf.Serializer
}

func newCodecs(s *runtime.Scheme) *codecs {
	return &codecs{
		json:  json.NewSerializerWithOptions(json.DefaultMetaFactory, s, s, json.SerializerOptions{Strict: true}),
		yaml:  json.NewSerializerWithOptions(json.DefaultMetaFactory, s, s, json.SerializerOptions{Yaml: true, Strict: true}),
		proto: protobuf.NewSerializer(s, s),
	}
}

// fieldValidation is the ?fieldValidation= directive.
type fieldValidation string

const (
	validateStrict fieldValidation = "Strict"
	validateWarn   fieldValidation = "Warn"
	validateIgnore fieldValidation = "Ignore"
)

func parseFieldValidation(r *http.Request) (fieldValidation, error) {
	switch v := fieldValidation(r.URL.Query().Get("fieldValidation")); v {
	case "":
		return validateWarn, nil
	case validateStrict, validateWarn, validateIgnore:
		return v, nil
	default:
		return "", badRequest("fieldValidation parameter unsupported: %s", v)
	}
}

// readBody reads a request body, which limit (limits.go) bounds: over
// the limit it is kube's 413; past the request's deadline (the
// connection's read deadline) kube's 504.
func readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	var tooLarge *http.MaxBytesError
	switch {
	case err == nil:
		return body, nil
	case errors.As(err, &tooLarge):
		return nil, errTooLarge(tooLarge.Limit)
	case r.Context().Err() != nil || errors.Is(err, os.ErrDeadlineExceeded):
		return nil, context.DeadlineExceeded
	}
	return nil, badRequest("unable to read the request body: %v", err)
}

// decoderFor returns the decoder of a create or update body's media type.
func (c *codecs) decoderFor(r *http.Request) (runtime.Decoder, error) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "application/json", "":
		return c.json, nil
	case "application/yaml":
		return c.yaml, nil
	case "application/vnd.kubernetes.protobuf":
		return c.proto, nil
	}
	return nil, errUnsupportedMediaType
}

// decodeBody decodes the request body into a new object of res, checks its
// kind and applies the field-validation directive: unknown fields are a
// 400 under Strict and warnings under Warn.
func (s *Server) decodeBody(r *http.Request, res *registry.Resource, fv fieldValidation, ws *warnings) (runtime.Object, error) {
	dec, err := s.codecs.decoderFor(r)
	if err != nil {
		return nil, err
	}
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	if dec != runtime.Decoder(s.codecs.proto) {
		if at, bad := invalidUTF8(body); bad {
			return nil, badRequest("the object provided is unrecognized (must be of type %s): invalid UTF-8 at byte %d of the body",
				res.Kind, at)
		}
	}
	return s.decodeWith(res, dec, body, fv, ws)
}

// invalidUTF8 returns the offset of the first byte of body that is not
// UTF-8. JSON and YAML bodies must be UTF-8: kube's decoders would turn
// such bytes into U+FFFD and store text the client never sent, so they
// are refused instead (a 400 that says where).
func invalidUTF8(body []byte) (int, bool) {
	if utf8.Valid(body) {
		return 0, false
	}
	for i := 0; i < len(body); {
		r, n := utf8.DecodeRune(body[i:])
		if r == utf8.RuneError && n == 1 {
			return i, true
		}
		i += n
	}
	return 0, false
}

func (s *Server) decodeWith(res *registry.Resource, dec runtime.Decoder, body []byte, fv fieldValidation, ws *warnings) (runtime.Object, error) {
	want := res.GVK()
	obj, got, err := dec.Decode(body, &want, res.New())
	if err != nil && !runtime.IsStrictDecodingError(err) {
		if got != nil && got.Kind != "" && *got != want {
			return nil, wrongKind(got, res, s.scheme.Recognizes(*got))
		}
		return nil, badRequest("the object provided is unrecognized (must be of type %s): %v (%s)", res.Kind, err, summarize(body))
	}
	if got != nil && *got != want {
		return nil, wrongKind(got, res, s.scheme.Recognizes(*got))
	}
	var strictErrs []error // unknown or duplicate fields
	if strict, ok := runtime.AsStrictDecodingError(err); ok {
		strictErrs = strict.Errors()
	}
	strictErrs = append(strictErrs, res.UnknownFieldErrors(obj)...)
	if err := strictOutcome(strictErrs, fv, ws); err != nil {
		return nil, badRequest("%s in version %q cannot be handled as a %s: %v", res.Kind, res.Version, res.Kind, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(want)
	return obj, nil
}

// wrongKind words kube's conversion failure, which names the Go types: the
// versioned one (package v1, v1beta1, …) and the internal one (package
// core for the core group, else the group's first label). The kind itself
// in a group and version the scheme does not know (apps/v1 ConfigMap) is
// kube's "no kind is registered" (without its scheme's source file).
func wrongKind(got *schema.GroupVersionKind, res *registry.Resource, known bool) error {
	if got.Kind == res.Kind && !known { // kube's scheme has no such group and version of the kind
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: no kind %q is registered for version %q",
			got.Kind, got.Version, res.Kind, got.Kind, got.GroupVersion().String()))
	}
	internal, _, _ := strings.Cut(res.Group, ".")
	if internal == "" {
		internal = "core"
	}
	return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: converting (%s.%s) to (%s.%s): unknown conversion",
		got.Kind, got.Version, res.Kind, got.Version, got.Kind, internal, res.Kind))
}

// summarize quotes the start of an undecodable body in an error message,
// as kube does: up to 30 bytes, as text for JSON and in hex otherwise.
func summarize(body []byte) string {
	const limit = 30
	s, more := body, ""
	if len(s) > limit {
		s, more = s[:limit], " ..."
	}
	switch {
	case len(body) == 0:
		return "<empty>"
	case body[0] == '{':
		return string(s) + more
	}
	return hex.EncodeToString(s) + more
}
