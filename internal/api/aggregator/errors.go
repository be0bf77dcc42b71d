package aggregator

import "errors"

// ErrNotAggregated is returned by Lookup for a group/version no APIService
// with a service names.
var ErrNotAggregated = errors.New("aggregator: not an aggregated group/version")

// errMissingUser: a request reached the proxy without an authenticated
// user (a wiring bug).
var errMissingUser = errors.New("aggregator: missing user")
