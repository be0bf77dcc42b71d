package auth

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/selection"
)

// NodeAuthorizer is kube's Node authorizer: it decides the requests of
// nodes (users system:node:<name> in system:nodes). A node may read the
// Secrets, ConfigMaps, PersistentVolumeClaims, PersistentVolumes,
// ServiceAccounts and ResourceClaims its pods reference, only its own
// Node and Lease by name, and list or watch pods by spec.nodeName; the
// other resources it may use as NodeRules say. What a node writes is
// narrowed further by NodeRestriction admission. Requests of other users
// get no opinion.
type NodeAuthorizer struct {
	Graph NodeGraphSource
}

// NodeName returns the node u is (ok false: u is not a node).
func NodeName(u *User) (string, bool) {
	if u == nil || !u.InGroup(GroupNodes) {
		return "", false
	}
	name, ok := strings.CutPrefix(u.Name, NodeUserPrefix)
	return name, ok
}

// noRelation is kube's reason for an object no pod of the node uses.
func noRelation(node string) string {
	return fmt.Sprintf("no relationship found between node '%s' and this object", node)
}

// Authorize returns whether a node may do a, and why not.
func (z *NodeAuthorizer) Authorize(ctx context.Context, a Attributes) (bool, string, error) {
	node, ok := NodeName(a.User)
	if !ok {
		return false, "", nil
	}
	if node == "" {
		return false, fmt.Sprintf("unknown node for user %q", a.User.Name), nil
	}
	if a.ResourceRequest {
		switch a.APIGroup + "/" + a.Resource {
		case "/secrets", "/configmaps":
			return z.readNamespaced(ctx, node, a)
		case "/persistentvolumeclaims":
			if a.Subresource == "status" {
				if a.Verb != "update" && a.Verb != "patch" {
					return false, "can only get/update/patch this type", nil
				}
				return z.related(ctx, node, a)
			}
			return z.get(ctx, node, a)
		case "/persistentvolumes", "resource.k8s.io/resourceclaims", "storage.k8s.io/volumeattachments":
			return z.get(ctx, node, a)
		case "/serviceaccounts":
			if a.Verb == "get" && a.Subresource == "" {
				return z.readNamespaced(ctx, node, a)
			}
			if a.Verb != "create" || a.Name == "" {
				return false, "can only create tokens for individual service accounts", nil
			}
			if a.Subresource != "token" {
				return false, "can only create token subresource of serviceaccount", nil
			}
			return z.related(ctx, node, a)
		case "coordination.k8s.io/leases":
			return ownNamed(node, a, "kube-node-lease", "node lease")
		case "storage.k8s.io/csinodes":
			if a.Subresource != "" {
				return false, "cannot authorize CSINode subresources", nil
			}
			return ownNamed(node, a, "", "CSINode")
		case "resource.k8s.io/resourceslices":
			return z.resourceSlice(ctx, node, a)
		case "/nodes":
			return authorizeNode(node, a)
		case "/pods":
			return z.pod(ctx, node, a)
		case "certificates.k8s.io/podcertificaterequests":
			return z.podCertificateRequest(ctx, node, a)
		}
	}
	for _, r := range NodeRules() {
		if ruleAllows(&a, &r) {
			return true, "", nil
		}
	}
	return false, "", nil
}

// readNamespaced: get, list or watch of one named object of a namespace
// that a pod of the node references.
func (z *NodeAuthorizer) readNamespaced(ctx context.Context, node string, a Attributes) (bool, string, error) {
	switch {
	case a.Verb != "get" && a.Verb != "list" && a.Verb != "watch":
		return false, "can only read resources of this type", nil
	case a.Subresource != "":
		return false, "cannot read subresource", nil
	case a.Namespace == "":
		return false, "can only read namespaced object of this type", nil
	}
	return z.related(ctx, node, a)
}

// get: get of one object a pod of the node references.
func (z *NodeAuthorizer) get(ctx context.Context, node string, a Attributes) (bool, string, error) {
	switch {
	case a.Verb != "get":
		return false, "can only get individual resources of this type", nil
	case a.Subresource != "":
		return false, "cannot get subresource", nil
	}
	return z.related(ctx, node, a)
}

// related: the object a names is referenced by a pod of the node.
func (z *NodeAuthorizer) related(ctx context.Context, node string, a Attributes) (bool, string, error) {
	if a.Name == "" {
		return false, "No Object name found", nil
	}
	g, err := z.Graph(ctx)
	if err != nil {
		return false, "", err
	}
	if !g.Related(node, a.Resource, a.Namespace, a.Name) {
		return false, noRelation(node), nil
	}
	return true, "", nil
}

// ownNamed: an object named after the node (its Lease in ns, its
// CSINode); create is let through for NodeRestriction to check the name.
func ownNamed(node string, a Attributes, ns, what string) (bool, string, error) {
	switch a.Verb {
	case "get", "create", "update", "patch", "delete":
	default:
		return false, fmt.Sprintf("can only get, create, update, patch, or delete a %s", what), nil
	}
	if ns != "" && a.Namespace != ns {
		return false, fmt.Sprintf("can only access leases in the %q system namespace", ns), nil
	}
	if a.Verb != "create" && a.Name != node {
		return false, fmt.Sprintf("can only access %s with the same name as the requesting node", what), nil
	}
	return true, "", nil
}

// selects reports whether a's field selector is field=value.
func selects(a Attributes, field, value string) bool {
	for _, r := range a.FieldSelector {
		if r.Field == field && (r.Operator == selection.Equals || r.Operator == selection.DoubleEquals) && r.Value == value {
			return true
		}
	}
	return false
}

func (z *NodeAuthorizer) resourceSlice(ctx context.Context, node string, a Attributes) (bool, string, error) {
	if a.Subresource != "" {
		return false, "cannot authorize ResourceSlice subresources", nil
	}
	switch a.Verb {
	case "create":
		return true, "", nil
	case "watch", "list", "deletecollection":
		if selects(a, "spec.nodeName", node) {
			return true, "", nil
		}
		return false, "can only list/watch/deletecollection resourceslices with nodeName field selector", nil
	}
	if a.Verb == "get" || a.Verb == "update" || a.Verb == "patch" || a.Verb == "delete" {
		return z.related(ctx, node, a)
	}
	return false, "only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection", nil
}

func (z *NodeAuthorizer) podCertificateRequest(ctx context.Context, node string, a Attributes) (bool, string, error) {
	if a.Subresource != "" {
		return false, "nodes may not access the status subresource of PodCertificateRequests", nil
	}
	switch a.Verb {
	case "create":
		return true, "", nil
	case "get":
		return z.related(ctx, node, a)
	case "list", "watch":
		if selects(a, "spec.nodeName", node) {
			return true, "", nil
		}
		return false, "can only list/watch podcertificaterequests with nodeName field selector", nil
	}
	return false, fmt.Sprintf("nodes may not %s podcertificaterequests", a.Verb), nil
}

func authorizeNode(node string, a Attributes) (bool, string, error) {
	switch a.Subresource {
	case "":
		switch a.Verb {
		case "create", "update", "patch":
			return true, "", nil
		case "get", "list", "watch":
			switch a.Name {
			case node:
				return true, "", nil
			case "":
				return false, fmt.Sprintf("node '%s' cannot read all nodes, only its own Node object", node), nil
			}
			return false, fmt.Sprintf("node '%s' cannot read '%s', only its own Node object", node, a.Name), nil
		}
	case "status":
		if a.Verb == "update" || a.Verb == "patch" {
			return true, "", nil
		}
	}
	return false, "", nil
}

func (z *NodeAuthorizer) pod(ctx context.Context, node string, a Attributes) (bool, string, error) {
	switch a.Subresource {
	case "":
		switch a.Verb {
		case "get":
			return z.get(ctx, node, a)
		case "list", "watch":
			if selects(a, "spec.nodeName", node) {
				return true, "", nil
			}
			if a.Name != "" {
				return z.related(ctx, node, a)
			}
			return false, "can only list/watch pods with spec.nodeName field selector", nil
		case "create", "delete":
			return true, "", nil
		}
	case "status":
		if a.Verb == "update" || a.Verb == "patch" {
			return true, "", nil
		}
	case "eviction":
		if a.Verb == "create" {
			return true, "", nil
		}
	}
	return false, "", nil
}
