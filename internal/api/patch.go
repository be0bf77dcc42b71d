package api

import (
	"fmt"
	"mime"
	"net/http"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
)

// maxJSONPatchOperations is kube's limit on the operations of a json-patch.
const maxJSONPatchOperations = 10000

// errCustomPatchMediaType is the 415 of a strategic merge patch (or any
// non-patch type) on a custom resource.
var errCustomPatchMediaType = statusErr(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
	"the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml", nil)

// patch serves PATCH of an object or of its status or scale subresource:
// a read-modify-write on the leader, retried when the object changes in
// between (only a resourceVersion the client put in its patch can end in
// 409 Conflict).
func (s *Server) patch(w http.ResponseWriter, r *http.Request, q *request) error {
	var pt types.PatchType
	options := func(r *http.Request) (*writeOptions, error) {
		var err error
		if pt, err = patchTypeOf(r.Header.Get("Content-Type"), q.res); err != nil {
			return nil, err
		}
		return parsePatchOptions(r, pt)
	}
	return serveWrite(s, w, r, options, func(opts *writeOptions, ws *warnings) (*writeResult, error) {
		body, err := readBody(r)
		if err != nil {
			return nil, err
		}
		if at, bad := invalidUTF8(body); bad {
			return nil, badRequest("error decoding patch: invalid UTF-8 at byte %d of the patch", at)
		}
		if q.subresource == "scale" {
			return s.patchScale(r.Context(), q, pt, body, opts, ws)
		}
		u := &mutation{q: q, opts: opts, ws: ws}
		if pt == types.ApplyYAMLPatchType {
			ap, err := decodeApplyPatch(body)
			if err != nil {
				return nil, err
			}
			u.desired = func(old runtime.Object, _ *kv.Object) (runtime.Object, error) {
				return s.applyTo(q.res, q.subresource, old, ap, body, opts, ws)
			}
			if q.subresource == "" {
				u.create = func() (runtime.Object, error) {
					return s.applyTo(q.res, "", emptyObject(q.res), ap, body, opts, ws)
				}
			}
		} else {
			u.desired = func(old runtime.Object, cur *kv.Object) (runtime.Object, error) {
				obj, err := s.patchedObject(q.res, pt, cur.Raw, old, body, opts.validation, ws)
				if err != nil {
					return nil, err
				}
				s.normalize(q.res, obj)
				if obj, err = s.trackUpdate(q.res, q.subresource, old, obj, opts.manager); err != nil {
					return nil, err
				}
				return subresourceOnly(q.subresource, old, obj), nil
			}
		}
		return s.guaranteedUpdate(r.Context(), u)
	})
}

// patchTypeOf maps a PATCH Content-Type to its patch type. Custom
// resources take no strategic merge patch.
func patchTypeOf(contentType string, res *registry.Resource) (types.PatchType, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch pt := types.PatchType(mt); pt {
	case types.JSONPatchType, types.MergePatchType, types.ApplyYAMLPatchType:
		return pt, nil
	case types.StrategicMergePatchType:
		if !res.Custom {
			return pt, nil
		}
	}
	if res.Custom {
		return "", errCustomPatchMediaType
	}
	return "", errPatchMediaType
}

// jsonPatchOp is one json-patch operation, for strict decoding.
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	From  string `json:"from"`
	Value any    `json:"value"`
}

// patchedObject applies a json, merge or strategic merge patch to the
// current object (cur is its JSON, old the decoded form) and decodes the
// result into a new object of row, applying the field-validation
// directive as kube does: unknown or duplicate fields are warnings (Warn)
// or a 422 on the field "patch" (Strict).
func (s *Server) patchedObject(row *registry.Resource, pt types.PatchType, cur []byte, old runtime.Object, patch []byte, fv fieldValidation, ws *warnings) (runtime.Object, error) {
	checkUnknown := fv == validateStrict || fv == validateWarn
	var strictErrs []error
	var patched []byte
	switch pt {
	case types.JSONPatchType:
		if checkUnknown {
			var ops []jsonPatchOp
			errs, err := kjson.UnmarshalStrict(patch, &ops)
			if err != nil {
				return nil, badRequest("error decoding patch: %v", err)
			}
			for _, e := range errs {
				strictErrs = append(strictErrs, fmt.Errorf("json patch %v", e))
			}
		}
		ops, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, badRequest("%v", err)
		}
		if len(ops) > maxJSONPatchOperations {
			return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
				"The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, len(ops)))
		}
		if patched, err = applyJSONPatch(ops, cur); err != nil {
			return nil, patchUnprocessable(err)
		}
	case types.MergePatchType:
		if checkUnknown {
			var m map[string]any
			errs, err := kjson.UnmarshalStrict(patch, &m)
			if err != nil {
				return nil, badRequest("error decoding patch: %v", err)
			}
			strictErrs = errs
		}
		var err error
		if patched, err = jsonpatch.MergePatch(cur, patch); err != nil {
			return nil, badRequest("%v", err)
		}
	case types.StrategicMergePatchType:
		return s.strategicPatched(row, old, patch, checkUnknown, fv, ws)
	}
	return s.decodePatched(row, patched, strictErrs, fv, ws)
}

// decodePatched decodes the JSON of a patched object.
func (s *Server) decodePatched(row *registry.Resource, patched []byte, strictErrs []error, fv fieldValidation, ws *warnings) (runtime.Object, error) {
	want := row.GVK()
	obj, _, err := s.codecsFor(row).json.Decode(patched, &want, row.New())
	if err != nil && !runtime.IsStrictDecodingError(err) {
		return nil, patchInvalid(string(patched), err)
	}
	if err != nil {
		strict, _ := runtime.AsStrictDecodingError(err)
		strictErrs = append(strictErrs, strict.Errors()...)
	}
	strictErrs = append(strictErrs, row.UnknownFieldErrors(obj)...)
	if err := strictOutcome(strictErrs, fv, ws); err != nil {
		return nil, patchInvalid(string(patched), err)
	}
	obj.GetObjectKind().SetGroupVersionKind(want)
	return obj, nil
}

// strategicPatched applies a strategic merge patch the way kube does: on
// the unstructured form of the current object, then converted back,
// reporting unknown fields.
func (s *Server) strategicPatched(row *registry.Resource, old runtime.Object, patch []byte, checkUnknown bool, fv fieldValidation, ws *warnings) (runtime.Object, error) {
	orig, err := runtime.DefaultUnstructuredConverter.ToUnstructured(old)
	if err != nil {
		return nil, err
	}
	pm := map[string]any{}
	var strictErrs []error
	if checkUnknown {
		if strictErrs, err = kjson.UnmarshalStrict(patch, &pm); err != nil {
			return nil, badRequest("%v", err)
		}
	} else if err := kjson.UnmarshalCaseSensitivePreserveInts(patch, &pm); err != nil {
		return nil, badRequest("%v", err)
	}
	patched, err := strategicpatch.StrategicMergeMapPatch(orig, pm, row.New())
	if err != nil {
		return nil, strategicPatchErr(err)
	}
	obj := row.New()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(patched, obj, checkUnknown); err != nil {
		strict, ok := runtime.AsStrictDecodingError(err)
		if !ok {
			return nil, patchInvalid(fmt.Sprintf("%+v", pm), err)
		}
		strictErrs = append(strictErrs, strict.Errors()...)
	}
	strictErrs = append(strictErrs, row.UnknownFieldErrors(obj)...)
	if err := strictOutcome(strictErrs, fv, ws); err != nil {
		return nil, patchInvalid(fmt.Sprintf("%+v", pm), err)
	}
	obj.GetObjectKind().SetGroupVersionKind(row.GVK())
	return obj, nil
}

// strictOutcome turns unknown-field errors into warnings (Warn) or an
// error (Strict).
func strictOutcome(errs []error, fv fieldValidation, ws *warnings) error {
	if len(errs) == 0 {
		return nil
	}
	switch fv {
	case validateWarn:
		for _, e := range errs {
			ws.add(e.Error())
		}
	case validateStrict:
		if n := len(errs); n > maxInvalidCauses { // kube lists them all
			errs = append(errs[:maxInvalidCauses:maxInvalidCauses], fmt.Errorf("and %d more", n-maxInvalidCauses))
		}
		return runtime.NewStrictDecodingError(errs)
	}
	return nil
}

// patchInvalid is kube's 422 for a patch whose result does not decode.
func patchInvalid(value string, err error) error {
	return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), value, err.Error())})
}

// patchUnprocessable is kube's 422 for a patch that does not apply (a
// failed json-patch test): its message is generic, the cause is not told.
func patchUnprocessable(err error) error {
	return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
}

// strategicPatchErr maps strategicpatch's errors like kube.
func strategicPatchErr(err error) error {
	switch err {
	case mergepatch.ErrBadJSONDoc, mergepatch.ErrBadPatchFormatForPrimitiveList, mergepatch.ErrBadPatchFormatForRetainKeys,
		mergepatch.ErrBadPatchFormatForSetElementOrderList, mergepatch.ErrUnsupportedStrategicMergePatchFormat:
		return apierrors.NewBadRequest(err.Error())
	case mergepatch.ErrNoListOfLists, mergepatch.ErrPatchContentNotMatchRetainKeys:
		return patchUnprocessable(err)
	}
	return unknownErr(err)
}

// codecsFor returns the decoders of row's kind (Scale has its own scheme).
func (s *Server) codecsFor(row *registry.Resource) *codecs {
	if row == scaleRow {
		return s.scaleCodecs()
	}
	return s.codecs
}

// applyJSONPatch applies ops to cur. evanphx/json-patch v5.9.11 panics on
// some malformed operations (a "test" of the whole document without a
// value: found by FuzzPatch); such a patch is the client's error, answered
// 422 like any patch that cannot be applied.
func applyJSONPatch(ops jsonpatch.Patch, cur []byte) (patched []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			patched, err = nil, fmt.Errorf("the patch cannot be applied: %v", r)
		}
	}()
	return ops.Apply(cur)
}
