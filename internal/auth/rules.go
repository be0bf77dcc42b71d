package auth

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// Attributes describe one request for authorization, as kube's
// authorizer.Attributes do.
type Attributes struct {
	User *User
	Verb string // get, list, watch, create, update, patch, delete, deletecollection, impersonate, …
	// ResourceRequest tells a request for a resource (the fields below)
	// from one for a path (Path).
	ResourceRequest bool
	APIGroup        string // "" is the core group
	Resource        string
	Subresource     string
	Namespace       string // "" at the cluster scope
	Name            string
	Path            string
	// FieldSelector is a list or watch's field selector (what the Node
	// authorizer lets a node list pods by).
	FieldSelector fields.Requirements
}

// forbiddenMessage words a refusal as kube-apiserver does.
func (a Attributes) forbiddenMessage() string {
	name := ""
	if a.User != nil {
		name = a.User.Name
	}
	if !a.ResourceRequest {
		return fmt.Sprintf("User %q cannot %s path %q", name, a.Verb, a.Path)
	}
	res := a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	if a.Namespace != "" {
		return fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", name, a.Verb, res, a.APIGroup, a.Namespace)
	}
	return fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", name, a.Verb, res, a.APIGroup)
}

// ruleAllows reports whether rule grants the request a.
func ruleAllows(a *Attributes, rule *rbacv1.PolicyRule) bool {
	if !matchesOrAll(rule.Verbs, a.Verb) {
		return false
	}
	if !a.ResourceRequest {
		return urlMatches(rule.NonResourceURLs, a.Path)
	}
	return matchesOrAll(rule.APIGroups, a.APIGroup) &&
		resourceMatches(rule.Resources, a.Resource, a.Subresource) &&
		(len(rule.ResourceNames) == 0 || slices.Contains(rule.ResourceNames, a.Name))
}

// matchesOrAll: the list holds v or "*".
func matchesOrAll(list []string, v string) bool {
	for _, x := range list {
		if x == v || x == "*" {
			return true
		}
	}
	return false
}

// resourceMatches: "*" is every resource and subresource, "pods" only the
// resource, "pods/log" its subresource, "*/scale" that subresource of any
// resource.
func resourceMatches(rules []string, resource, sub string) bool {
	combined := resource
	if sub != "" {
		combined += "/" + sub
	}
	for _, r := range rules {
		switch {
		case r == "*" || r == combined:
			return true
		case sub != "" && r == "*/"+sub:
			return true
		}
	}
	return false
}

// urlMatches: "*" is every path, "/apis/*" a prefix, otherwise exact.
func urlMatches(rules []string, path string) bool {
	for _, r := range rules {
		if r == "*" || r == path {
			return true
		}
		if prefix, ok := strings.CutSuffix(r, "*"); ok && strings.HasPrefix(path, prefix) {
			return true
		}
	}
	return false
}
