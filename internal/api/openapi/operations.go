package openapi

import (
	"net/http"

	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// objectMediaTypes are the media types kube answers an object in.
func objectMediaTypes() []string {
	return []string{"application/json", "application/vnd.kubernetes.protobuf", "application/yaml"}
}

// listMediaTypes are those of a list, which may also be a watch stream.
func listMediaTypes() []string {
	return []string{
		"application/json", "application/json;stream=watch",
		"application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf;stream=watch",
		"application/yaml",
	}
}

// patchMediaTypes are the patch types a built-in kind accepts. kubectl
// apply sends a strategic merge patch only if it finds that type here.
func patchMediaTypes() []string {
	return []string{
		"application/apply-patch+yaml", "application/json-patch+json",
		"application/merge-patch+json", "application/strategic-merge-patch+json",
	}
}

// content maps each media type to a reference to definition ref.
func content(ref string, mediaTypes []string) map[string]*spec3.MediaType {
	c := make(map[string]*spec3.MediaType, len(mediaTypes))
	for _, mt := range mediaTypes {
		c[mt] = &spec3.MediaType{MediaTypeProps: spec3.MediaTypeProps{Schema: spec.RefSchema(ref)}}
	}
	return c
}

// responses answers each code with ref in mediaTypes, plus kube's 401.
func responses(ref string, mediaTypes []string, codes ...int) *spec3.Responses {
	rs := &spec3.Responses{ResponsesProps: spec3.ResponsesProps{StatusCodeResponses: map[int]*spec3.Response{
		http.StatusUnauthorized: {ResponseProps: spec3.ResponseProps{Description: http.StatusText(http.StatusUnauthorized)}},
	}}}
	for _, code := range codes {
		rs.StatusCodeResponses[code] = &spec3.Response{ResponseProps: spec3.ResponseProps{
			Description: http.StatusText(code),
			Content:     content(ref, mediaTypes),
		}}
	}
	return rs
}

// requestBody takes ref in mediaTypes.
func requestBody(ref string, mediaTypes []string, required bool) *spec3.RequestBody {
	return &spec3.RequestBody{RequestBodyProps: spec3.RequestBodyProps{
		Content: content(ref, mediaTypes), Required: required,
	}}
}

// gvkExtension is the x-kubernetes-group-version-kind of an operation.
type gvkExtension struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// operation is one operation of a path, tagged like kube's.
func operation(gv groupVersion, id, desc string, params []*spec3.Parameter, body *spec3.RequestBody,
	resp *spec3.Responses) *spec3.Operation {
	return &spec3.Operation{OperationProps: spec3.OperationProps{
		Tags:        []string{operationTag(gv)},
		Description: desc,
		OperationId: id,
		Parameters:  params,
		RequestBody: body,
		Responses:   resp,
	}}
}

// kubeOperation is an operation on a kind, with kube's action and
// group-version-kind extensions.
func kubeOperation(k Kind, action, id, desc string, params []*spec3.Parameter, body *spec3.RequestBody,
	resp *spec3.Responses) *spec3.Operation {
	op := operation(k.groupVersion(), id, desc, params, body, resp)
	op.AddExtension("x-kubernetes-action", action)
	op.AddExtension("x-kubernetes-group-version-kind", gvkExtension{k.Group, k.Version, k.Kind})
	return op
}
