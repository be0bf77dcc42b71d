package discovery

import "errors"

// Errors returned by New and Config.Validate. Callers test them with errors.Is.
var (
	// ErrInvalidResource: a row of the resource table is incomplete or
	// inconsistent (no version, kind or verbs, a "/" in a name, ...).
	ErrInvalidResource = errors.New("invalid resource")
	// ErrDuplicateResource: two rows describe the same group, version and
	// resource, or a resource lists the same subresource twice.
	ErrDuplicateResource = errors.New("duplicate resource")
	// ErrInvalidConfig: the Config does not validate.
	ErrInvalidConfig = errors.New("invalid config")
)

// Request errors. Handlers return them; serve.go turns them into answers.
var (
	// errNotFound: the group or version is not served. Answered with the
	// plain-text 404 of Go's mux, as kube-apiserver does for unknown groups.
	errNotFound = errors.New("discovery: not found")
	// errRouteNotAcceptable: the Accept header names no media type the route
	// produces. kube-apiserver answers this from go-restful's route selection
	// (/api, /api/{version}, /apis/{group}/{version}).
	errRouteNotAcceptable = errors.New("discovery: no route produces the accepted media types")
	// errNotAcceptable: content negotiation found no acceptable
	// representation (for example only v2beta1 aggregated discovery).
	errNotAcceptable = errors.New("discovery: no acceptable representation")
)
