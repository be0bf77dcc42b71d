package api

import (
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/api/validation/path"

	"github.com/litek8s/litek8s/internal/audit"
	"github.com/litek8s/litek8s/internal/auth"
)

// auditAttributes are what the audit policy matches and the event's verb
// and objectRef, read from the path alone as kube's RequestInfoFactory
// does (the audit filter runs before routing): /api/v1/… and
// /apis/{group}/{version}/… with at least a resource are resource
// requests, everything else is a non-resource path with the method's
// verb.
func auditAttributes(r *http.Request, u *auth.User) *audit.Attributes {
	a := &audit.Attributes{Path: r.URL.Path, Verb: nonResourceVerb(r.Method)}
	if u != nil {
		a.User, a.Groups = u.Name, u.Groups
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		a.APIVersion, parts = parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		a.APIGroup, a.APIVersion, parts = parts[1], parts[2], parts[3:]
	default:
		return a
	}
	a.ResourceRequest = true
	watchPath := false
	if parts[0] == "watch" && len(parts) > 1 { // kube's deprecated /watch/ paths
		watchPath, parts = true, parts[1:]
	}
	if parts[0] == "namespaces" && len(parts) > 1 {
		a.Namespace = parts[1]
		// namespaces/{name}/status and /finalize are the namespace's own
		if len(parts) > 2 && parts[2] != "status" && parts[2] != "finalize" {
			parts = parts[2:]
		}
	}
	a.Resource = parts[0]
	if len(parts) > 1 {
		a.Name = parts[1]
	}
	if len(parts) > 2 {
		a.Subresource = parts[2]
	}
	switch r.Method {
	case http.MethodPost:
		a.Verb = "create"
	case http.MethodGet, http.MethodHead:
		a.Verb = "get"
	case http.MethodPut:
		a.Verb = "update"
	case http.MethodPatch:
		a.Verb = "patch"
	case http.MethodDelete:
		a.Verb = "delete"
	default:
		a.Verb = ""
	}
	if watchPath {
		a.Verb = "watch"
	}
	if a.Name == "" && a.Verb == "get" {
		a.Verb = "list"
		if isWatch(r) {
			a.Verb = "watch"
		}
		if _, name := selectorAttributes(r.URL.Query()); name != "" && len(path.IsValidPathSegmentName(name)) == 0 {
			a.Name = name
		}
	}
	if a.Name == "" && a.Verb == "delete" {
		a.Verb = "deletecollection"
	}
	return a
}
