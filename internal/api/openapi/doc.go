// Package openapi serves the OpenAPI v3 documents of the kinds litek8s
// serves: the /openapi/v3 index and one document per group-version
// (/openapi/v3/api/v1, /openapi/v3/apis/<group>/<version>), shaped like
// kube-apiserver's, so that kubectl can explain fields, detect server-side
// field validation (the fieldValidation query parameter of POST, PUT and
// PATCH) and send strategic merge patches (the PATCH request content
// types, the x-kubernetes-patch-* extensions). /openapi/v2 is the same
// schemas converted to one Swagger 2.0 document (v2.go), in JSON or
// gnostic's protobuf, for the clients that still read v2.
//
// It owns the generation of those documents. Schemas come from reflection
// over the k8s.io/api Go types: json tags (omitempty decides required),
// SwaggerDoc descriptions, OpenAPIModelName names, patchStrategy and
// patchMergeKey struct tags, and the OpenAPISchemaType methods of Time,
// MicroTime, Quantity and IntOrString. What the Go types do not carry
// (+listType, +listMapKey, +mapType, +default, unions) is taken from
// client-go's structured-merge-diff schema where it knows the type
// (hints.go). Paths and their parameters come from the Kind table and the
// metav1 options structs. Not generated: enum values, the legacy /watch/
// paths and subresources (status, scale, ...), which Kind does not
// describe.
//
// The handlers answer GET and HEAD only; their only errors are a
// plain-text 404 (unknown document) and 406 (an Accept without JSON).
//
// Concurrency: New computes every document, its hash and the index once;
// after that a Handler is immutable and may serve any number of
// goroutines. Register only adds routes to the given mux.
package openapi
