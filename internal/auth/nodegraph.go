package auth

import (
	"context"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// NodeGraph is what the pods bound to each node reference, as kube's Node
// authorizer graph holds it: the pod itself, its Secrets, ConfigMaps,
// PersistentVolumeClaims (and the PersistentVolumes they are bound to),
// its ServiceAccount and its ResourceClaims; and the VolumeAttachments,
// ResourceSlices and PodCertificateRequests that name the node. Build it with NewNodeGraph;
// it is read-only afterwards.
type NodeGraph struct {
	related map[objectRef]map[string]bool // object → nodes whose pods reference it
}

// objectRef names an object: resource is the plural ("secrets"), ns is
// "" for cluster-scoped ones.
type objectRef struct{ resource, ns, name string }

// NodeGraphSource returns the current graph.
type NodeGraphSource func(ctx context.Context) (*NodeGraph, error)

// NodeObjects are the stored objects a NodeGraph is built from.
type NodeObjects struct {
	Pods   []*corev1.Pod
	Claims []*corev1.PersistentVolumeClaim
	// Objects that name their node: VolumeAttachments, ResourceSlices
	// (cluster-scoped) and PodCertificateRequests.
	VolumeAttachments []*storagev1.VolumeAttachment
	ResourceSlices    []*resourcev1.ResourceSlice
	PodCertificates   []*certificatesv1.PodCertificateRequest
}

// NewNodeGraph indexes the pods bound to a node and the claims they use,
// and the objects that name their node.
func NewNodeGraph(in NodeObjects) *NodeGraph {
	g := &NodeGraph{related: map[objectRef]map[string]bool{}}
	relate := func(r objectRef, node string) {
		if node == "" || r.name == "" {
			return
		}
		if g.related[r] == nil {
			g.related[r] = map[string]bool{}
		}
		g.related[r][node] = true
	}
	for _, va := range in.VolumeAttachments {
		relate(objectRef{"volumeattachments", "", va.Name}, va.Spec.NodeName)
	}
	for _, rs := range in.ResourceSlices {
		if rs.Spec.NodeName != nil {
			relate(objectRef{"resourceslices", "", rs.Name}, *rs.Spec.NodeName)
		}
	}
	for _, p := range in.PodCertificates {
		relate(objectRef{"podcertificaterequests", p.Namespace, p.Name}, string(p.Spec.NodeName))
	}
	pods, pvcs := in.Pods, in.Claims
	volumeOf := map[objectRef]string{}
	for _, c := range pvcs {
		if c.Spec.VolumeName != "" {
			volumeOf[objectRef{"persistentvolumeclaims", c.Namespace, c.Name}] = c.Spec.VolumeName
		}
	}
	for _, p := range pods {
		node := p.Spec.NodeName
		if node == "" {
			continue
		}
		var add func(resource, name string)
		add = func(resource, name string) {
			if name == "" {
				return
			}
			ns := p.Namespace
			if resource == "persistentvolumes" {
				ns = ""
			}
			r := objectRef{resource, ns, name}
			relate(r, node)
			if resource == "persistentvolumeclaims" {
				if pv := volumeOf[r]; pv != "" {
					add("persistentvolumes", pv)
				}
			}
		}
		add("pods", p.Name)
		add("serviceaccounts", p.Spec.ServiceAccountName)
		visitPodRefs(p, add)
	}
	return g
}

// Related reports whether object resource ns/name is referenced by a pod
// bound to node.
func (g *NodeGraph) Related(node, resource, ns, name string) bool {
	return g.related[objectRef{resource, ns, name}][node]
}

// visitPodRefs calls add with every Secret, ConfigMap, claim and
// ResourceClaim p references.
func visitPodRefs(p *corev1.Pod, add func(resource, name string)) {
	for _, s := range p.Spec.ImagePullSecrets {
		add("secrets", s.Name)
	}
	for i := range p.Spec.Volumes {
		visitVolume(p, &p.Spec.Volumes[i], add)
	}
	var cs []*corev1.Container
	for i := range p.Spec.InitContainers {
		cs = append(cs, &p.Spec.InitContainers[i])
	}
	for i := range p.Spec.Containers {
		cs = append(cs, &p.Spec.Containers[i])
	}
	for i := range p.Spec.EphemeralContainers {
		cs = append(cs, (*corev1.Container)(&p.Spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	for _, c := range cs {
		for _, e := range c.EnvFrom {
			if e.SecretRef != nil {
				add("secrets", e.SecretRef.Name)
			}
			if e.ConfigMapRef != nil {
				add("configmaps", e.ConfigMapRef.Name)
			}
		}
		for _, e := range c.Env {
			if vf := e.ValueFrom; vf != nil {
				if vf.SecretKeyRef != nil {
					add("secrets", vf.SecretKeyRef.Name)
				}
				if vf.ConfigMapKeyRef != nil {
					add("configmaps", vf.ConfigMapKeyRef.Name)
				}
			}
		}
	}
	for _, s := range p.Status.ResourceClaimStatuses {
		if s.ResourceClaimName != nil {
			add("resourceclaims", *s.ResourceClaimName)
		}
	}
}

// visitVolume adds what volume v of pod p references.
func visitVolume(p *corev1.Pod, v *corev1.Volume, add func(resource, name string)) {
	secretRef := func(r *corev1.LocalObjectReference) {
		if r != nil {
			add("secrets", r.Name)
		}
	}
	switch {
	case v.Secret != nil:
		add("secrets", v.Secret.SecretName)
	case v.ConfigMap != nil:
		add("configmaps", v.ConfigMap.Name)
	case v.Projected != nil:
		for _, s := range v.Projected.Sources {
			if s.Secret != nil {
				add("secrets", s.Secret.Name)
			}
			if s.ConfigMap != nil {
				add("configmaps", s.ConfigMap.Name)
			}
		}
	case v.PersistentVolumeClaim != nil:
		add("persistentvolumeclaims", v.PersistentVolumeClaim.ClaimName)
	case v.Ephemeral != nil:
		add("persistentvolumeclaims", p.Name+"-"+v.Name)
	case v.CSI != nil:
		secretRef(v.CSI.NodePublishSecretRef)
	case v.AzureFile != nil:
		add("secrets", v.AzureFile.SecretName)
	case v.CephFS != nil:
		secretRef(v.CephFS.SecretRef)
	case v.Cinder != nil:
		secretRef(v.Cinder.SecretRef)
	case v.FlexVolume != nil:
		secretRef(v.FlexVolume.SecretRef)
	case v.ISCSI != nil:
		secretRef(v.ISCSI.SecretRef)
	case v.RBD != nil:
		secretRef(v.RBD.SecretRef)
	case v.ScaleIO != nil:
		secretRef(v.ScaleIO.SecretRef)
	case v.StorageOS != nil:
		secretRef(v.StorageOS.SecretRef)
	}
}

// PodReferences lists the resources of the API objects p references
// (Secrets, ConfigMaps, claims, ResourceClaims), each once, in the order
// met: a mirror pod may reference none.
func PodReferences(p *corev1.Pod) []string {
	var out []string
	visitPodRefs(p, func(resource, name string) {
		if name != "" && !slices.Contains(out, resource) {
			out = append(out, resource)
		}
	})
	for _, v := range p.Spec.Volumes {
		if pr := v.Projected; pr != nil {
			for _, s := range pr.Sources {
				switch {
				case s.ServiceAccountToken != nil && !slices.Contains(out, "serviceaccounts"):
					out = append(out, "serviceaccounts")
				case s.ClusterTrustBundle != nil && !slices.Contains(out, "clustertrustbundles"):
					out = append(out, "clustertrustbundles")
				case s.PodCertificate != nil && !slices.Contains(out, "podcertificates"):
					out = append(out, "podcertificates")
				}
			}
		}
	}
	if len(p.Spec.ResourceClaims) > 0 && !slices.Contains(out, "resourceclaims") {
		out = append(out, "resourceclaims")
	}
	return out
}
