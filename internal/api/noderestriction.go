package api

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	kubeletapis "k8s.io/kubelet/pkg/apis"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/auth"
)

// NodeRestriction (kube's admission plugin): what the Node authorizer
// lets a node write is narrowed to what is its own. A node creates and
// updates only its own Node (no taints, ownerReferences or
// node-restriction.kubernetes.io/ and unknown kubernetes.io labels),
// creates only mirror pods bound to itself and deletes only pods bound to
// itself, updates the status of its own pods only (not their labels),
// writes only its own Lease and CSINode, creates only its own
// ResourceSlices, and asks certificates for itself only.

// nodeForbidden is the 403 of a refused node write.
func nodeForbidden(q *request, name string, format string, args ...any) error {
	return apierrors.NewForbidden(q.res.GroupResource(), name, fmt.Errorf(format, args...))
}

// nodeRestriction checks a node's create or update.
func (s *Server) nodeRestriction(ctx context.Context, a *writeAttrs) error {
	node, isNode := auth.NodeName(a.user)
	if !isNode {
		return nil
	}
	q := a.q
	name := q.name
	if m, err := apimeta.Accessor(a.obj); err == nil && name == "" {
		name = m.GetName()
	}
	if node == "" {
		return nodeForbidden(q, name, "could not determine node from user %q", a.user.Name)
	}
	switch q.res.Group + "/" + q.res.Resource {
	case "/pods":
		return nodePodWrite(node, name, a)
	case "/nodes":
		return nodeNodeWrite(node, name, a)
	case "/persistentvolumeclaims":
		if q.subresource != "status" {
			return nodeForbidden(q, name, "may only update PVC status")
		}
		return nodePVCStatus(node, name, a)
	case "coordination.k8s.io/leases":
		if q.namespace != corev1.NamespaceNodeLease {
			return nodeForbidden(q, name, "can only access leases in the %q system namespace", corev1.NamespaceNodeLease)
		}
		if _, ok := a.obj.(*coordinationv1.Lease); ok && name != node {
			return nodeForbidden(q, name, "can only access node lease with the same name as the requesting node")
		}
	case "storage.k8s.io/csinodes":
		if name != node {
			return nodeForbidden(q, name, "can only access CSINode with the same name as the requesting node")
		}
	case "certificates.k8s.io/certificatesigningrequests":
		return nodeCSR(node, name, a)
	case "resource.k8s.io/resourceslices":
		if rs, ok := a.obj.(*resourcev1.ResourceSlice); ok && a.old == nil && (rs.Spec.NodeName == nil || *rs.Spec.NodeName != node) {
			return nodeForbidden(q, name, "can only create ResourceSlice with the same NodeName as the requesting node")
		}
	case "certificates.k8s.io/podcertificaterequests":
		if pcr, ok := a.obj.(*certificatesv1.PodCertificateRequest); ok && a.old == nil && string(pcr.Spec.NodeName) != node {
			return nodeForbidden(q, name, "PodCertificateRequest.Spec.NodeName=%q, which is not the requesting node %q", pcr.Spec.NodeName, node)
		}
	}
	return nil
}

// nodePodWrite: mirror pods of its own on create, status of its own pods.
func nodePodWrite(node, name string, a *writeAttrs) error {
	q := a.q
	pod, _ := a.obj.(*corev1.Pod)
	switch {
	case pod == nil:
		return nodeForbidden(q, name, "unexpected type %T", a.obj)
	case q.subresource == "status":
		old, _ := a.old.(*corev1.Pod)
		if old == nil || old.Spec.NodeName != node {
			return nodeForbidden(q, name, "node %q can only update pod status for pods with spec.nodeName set to itself", node)
		}
		if !labels.Equals(old.Labels, pod.Labels) {
			return nodeForbidden(q, name, "node %q cannot update labels through pod status", node)
		}
		if !apiequality.Semantic.DeepEqual(old.Status.ResourceClaimStatuses, pod.Status.ResourceClaimStatuses) {
			return nodeForbidden(q, name, "node %q cannot update resource claim statues", node)
		}
		return nil
	case q.subresource != "":
		return nodeForbidden(q, name, "unexpected pod subresource %q, only 'status' and 'eviction' are allowed", q.subresource)
	case a.old != nil:
		return nodeForbidden(q, name, "unexpected operation %q, node %q can only create and delete mirror pods", "UPDATE", node)
	}
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; !mirror {
		return nodeForbidden(q, name, "pod does not have %q annotation, node %q can only create mirror pods", corev1.MirrorPodAnnotationKey, node)
	}
	if pod.Spec.NodeName != node {
		return nodeForbidden(q, name, "node %q can only create pods with spec.nodeName set to itself", node)
	}
	if len(pod.OwnerReferences) != 1 {
		return nodeForbidden(q, name, "node %q can only create pods with an owner reference set to itself", node)
	}
	o := pod.OwnerReferences[0]
	switch {
	case o.APIVersion != "v1" || o.Kind != "Node" || o.Name != node:
		return nodeForbidden(q, name, "node %q can only create pods with an owner reference set to itself", node)
	case o.Controller == nil || !*o.Controller:
		return nodeForbidden(q, name, "node %q can only create pods with a controller owner reference set to itself", node)
	case o.BlockOwnerDeletion != nil && *o.BlockOwnerDeletion:
		return nodeForbidden(q, name, "node %q must not set blockOwnerDeletion on an owner reference", node)
	}
	if what := podAPIReference(pod); what != "" {
		return nodeForbidden(q, name, "node %q can not create pods that reference %s", node, what)
	}
	return nil
}

// podAPIReference names the kind of API object a mirror pod may not
// reference ("" when it references none).
func podAPIReference(pod *corev1.Pod) string {
	if pod.Spec.ServiceAccountName != "" {
		return "serviceaccounts"
	}
	if r := auth.PodReferences(pod); len(r) > 0 {
		return r[0]
	}
	return ""
}

// nodeNodeWrite: its own Node only, without forbidden labels, taints or
// ownerReferences changes.
func nodeNodeWrite(node, name string, a *writeAttrs) error {
	q := a.q
	if name != node {
		return nodeForbidden(q, name, "node %q is not allowed to modify node %q", node, name)
	}
	n, ok := a.obj.(*corev1.Node)
	if !ok {
		return nodeForbidden(q, name, "unexpected type %T", a.obj)
	}
	old, _ := a.old.(*corev1.Node)
	if old == nil {
		if n.Spec.ConfigSource != nil {
			return nodeForbidden(q, name, "node %q is not allowed to create pods with a non-nil configSource", node)
		}
		if bad := forbiddenNodeLabels(n.Labels, nil); len(bad) > 0 {
			return nodeForbidden(q, name, "node %q is not allowed to set the following labels: %s", node, strings.Join(bad, ", "))
		}
		return nil
	}
	switch {
	case n.Spec.ConfigSource != nil && !apiequality.Semantic.DeepEqual(n.Spec.ConfigSource, old.Spec.ConfigSource):
		return nodeForbidden(q, name, "node %q is not allowed to update configSource to a new non-nil configSource", node)
	case !apiequality.Semantic.DeepEqual(n.Spec.Taints, old.Spec.Taints):
		return nodeForbidden(q, name, "node %q is not allowed to modify taints", node)
	case !apiequality.Semantic.DeepEqual(n.OwnerReferences, old.OwnerReferences):
		return nodeForbidden(q, name, "node %q is not allowed to modify ownerReferences", node)
	}
	if bad := forbiddenNodeLabels(n.Labels, old.Labels); len(bad) > 0 {
		return nodeForbidden(q, name, "is not allowed to modify labels: %s", strings.Join(bad, ", "))
	}
	return nil
}

// forbiddenNodeLabels returns the labels that differ between a and b and
// that a node may not set: node-restriction.kubernetes.io/ ones and
// kubernetes.io or k8s.io ones that are not the kubelet's (sorted).
func forbiddenNodeLabels(a, b map[string]string) []string {
	var bad []string
	check := func(k string) {
		ns, _, ok := strings.Cut(k, "/")
		if !ok {
			ns = ""
		}
		restricted := ns == corev1.LabelNamespaceNodeRestriction || strings.HasSuffix(ns, "."+corev1.LabelNamespaceNodeRestriction)
		kube := ns == "kubernetes.io" || strings.HasSuffix(ns, ".kubernetes.io") || ns == "k8s.io" || strings.HasSuffix(ns, ".k8s.io")
		if (restricted || kube && !kubeletapis.IsKubeletLabel(k)) && !slices.Contains(bad, k) {
			bad = append(bad, k)
		}
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			check(k)
		}
	}
	for k, v := range b {
		if w, ok := a[k]; !ok || v != w {
			check(k)
		}
	}
	slices.Sort(bad)
	return bad
}

// nodePVCStatus: a node changes a claim's status capacity, conditions
// and allocated resources only (kube with RecoverVolumeExpansionFailure,
// on by default).
func nodePVCStatus(node, name string, a *writeAttrs) error {
	old, _ := a.old.(*corev1.PersistentVolumeClaim)
	pvc, _ := a.obj.(*corev1.PersistentVolumeClaim)
	if old == nil || pvc == nil {
		return nodeForbidden(a.q, name, "unexpected operation %q", "CREATE")
	}
	o, n := old.DeepCopy(), pvc.DeepCopy()
	o.Status.Capacity, n.Status.Capacity = nil, nil
	o.Status.Conditions, n.Status.Conditions = nil, nil
	o.Status.AllocatedResources, n.Status.AllocatedResources = nil, nil
	o.Status.AllocatedResourceStatuses, n.Status.AllocatedResourceStatuses = nil, nil
	o.ResourceVersion, n.ResourceVersion = "", ""
	o.ManagedFields, n.ManagedFields = nil, nil
	if !apiequality.Semantic.DeepEqual(o, n) {
		return nodeForbidden(a.q, name, "node %q is not allowed to update fields other than status.quantity and status.conditions", node)
	}
	return nil
}

// nodeCSR: a node asks kubelet client and serving certificates for itself
// only.
func nodeCSR(node, name string, a *writeAttrs) error {
	csr, ok := a.obj.(*certificatesv1.CertificateSigningRequest)
	if !ok || a.old != nil {
		return nil
	}
	if csr.Spec.SignerName != auth.SignerKubeletServing && csr.Spec.SignerName != auth.SignerKubeAPIServerClientKubelet {
		return nil
	}
	req, err := registry.ParseCSR(csr.Spec.Request)
	if err != nil {
		return nodeForbidden(a.q, name, "unable to parse csr: %v", err)
	}
	if req.Subject.CommonName != auth.NodeUserPrefix+node {
		return nodeForbidden(a.q, name, "can only create a node CSR with CN=system:node:%s", node)
	}
	return nil
}

// admitNodeDelete: a node deletes only pods bound to itself (its mirror
// pods and those it evicts). Other users pass.
func (s *Server) admitNodeDelete(ctx context.Context, q *request) error {
	node, isNode := auth.NodeName(auth.UserFrom(ctx))
	if !isNode || q.res.Group != "" || q.res.Resource != "pods" {
		return nil
	}
	cur, _, err := s.store.Get(ctx, q.key(), false)
	if err != nil {
		return storeErr(err, q.res, q.name)
	}
	var pod struct {
		Spec struct {
			NodeName string `json:"nodeName"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(cur.Raw, &pod); err != nil {
		return err
	}
	if node == "" || pod.Spec.NodeName != node {
		return nodeForbidden(q, q.name, "node %q can only delete pods with spec.nodeName set to itself", node)
	}
	return nil
}
