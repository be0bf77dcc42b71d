package controllers

import "errors"

// Errors of the package. Callers test them with errors.Is.
var (
	// ErrUnknownKind: an ownerReference names a kind the API does not
	// serve; the dependent is retried (with backoff) and never deleted on
	// that account, as in kube.
	ErrUnknownKind = errors.New("controllers: owner kind not served")
	// ErrNotServed: a write addresses a resource the API no longer
	// serves.
	ErrNotServed = errors.New("controllers: resource not served")
	// ErrWatch: an in-process client asked for a watch; controllers watch
	// the local store through informers instead.
	ErrWatch = errors.New("controllers: no watches through the in-process API client")
)
