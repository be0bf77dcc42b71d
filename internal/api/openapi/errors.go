package openapi

import "errors"

// Errors New returns, wrapped with the offending kind or type. Callers test
// them with errors.Is.
var (
	// ErrInvalidKind: a Kind is incomplete (missing version, resource,
	// kind or types), has an unknown verb, or its types are not API objects.
	ErrInvalidKind = errors.New("invalid kind")
	// ErrDuplicateKind: two Kinds name the same group, version and resource.
	ErrDuplicateKind = errors.New("duplicate kind")
	// ErrUnsupportedType: a Go type reachable from a Kind cannot be
	// described in OpenAPI (channels, functions, maps with non-string keys)
	// or two Go types claim the same schema name.
	ErrUnsupportedType = errors.New("unsupported type")
)
