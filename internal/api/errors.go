package api

import (
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
)

// Errors handlers return are *apierrors.StatusError values (built with
// k8s.io/apimachinery/pkg/api/errors) or kv errors; the adapter in
// handler.go turns anything else into a 500 InternalError.

// statusErr builds a Status error with the exact fields kube uses for cases
// apierrors has no constructor for.
func statusErr(code int32, reason metav1.StatusReason, msg string, details *metav1.StatusDetails) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: code, Reason: reason, Message: msg, Details: details,
	}}
}

var (
	errNotFoundResource = statusErr(http.StatusNotFound, metav1.StatusReasonNotFound,
		"the server could not find the requested resource", &metav1.StatusDetails{})
	errMethodNotAllowed = statusErr(http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed,
		"the server does not allow this method on the requested resource", &metav1.StatusDetails{})
	errUnauthorized         = statusErr(http.StatusUnauthorized, metav1.StatusReasonUnauthorized, "Unauthorized", nil)
	errUnsupportedMediaType = statusErr(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
		"the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf", nil)
	// errPatchMediaType is kube's bare 415 for a PATCH with a non-patch type.
	errPatchMediaType = statusErr(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
		"415: Unsupported Media Type", &metav1.StatusDetails{})
	errNotAcceptable = statusErr(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
		"406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf", &metav1.StatusDetails{})
)

func badRequest(format string, args ...any) error {
	return statusErr(http.StatusBadRequest, metav1.StatusReasonBadRequest, fmt.Sprintf(format, args...), nil)
}

// storeErr maps a store error about name of res to its Status.
func storeErr(err error, res *registry.Resource, name string) error {
	gr := res.GroupResource()
	switch {
	case errors.Is(err, kv.ErrNotFound):
		return apierrors.NewNotFound(gr, name)
	case errors.Is(err, kv.ErrAlreadyExists):
		return apierrors.NewAlreadyExists(gr, name)
	case errors.Is(err, kv.ErrConflict):
		return apierrors.NewConflict(gr, name,
			errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	}
	return availabilityErr(err)
}

// availabilityErr maps the store's errors that do not concern one object.
func availabilityErr(err error) error {
	switch {
	case errors.Is(err, kv.ErrExpired):
		return apierrors.NewResourceExpired("The resourceVersion for the provided list is too old.")
	case errors.Is(err, kv.ErrUnknownOutcome):
		// No Retry-After: client-go would resend the write by itself, and a
		// create that was committed after all would come back 409.
		return apierrors.NewServerTimeout(schemaNone, "write", 0)
	case errors.Is(err, kv.ErrNoLeader), errors.Is(err, kv.ErrNotLeader), errors.Is(err, kv.ErrClosed):
		// Retry-After: 1 makes client-go (kubectl, Helm, controllers) retry
		// by itself, so an election is invisible to clients.
		return statusErr(http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable,
			"no leader is available right now; retry", &metav1.StatusDetails{RetryAfterSeconds: 1})
	}
	return err
}
