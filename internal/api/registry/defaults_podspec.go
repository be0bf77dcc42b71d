package registry

import (
	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
)

// The scheme defaults kube applies inside a pod spec, wherever one appears
// (pods and every pod template): volumes, containers' env, probes, lifecycle
// handlers and resources (kube's SetObjectDefaults_Pod walk over
// SetDefaults_Volume, SetDefaults_*VolumeSource, SetDefaults_Probe,
// SetDefaults_HTTPGetAction, SetDefaults_ObjectFieldSelector,
// SetDefaults_ResourceList). Pure functions of the spec, idempotent.

// defaultPodSpecParts defaults the volumes and containers of sp.
func defaultPodSpecParts(sp *corev1.PodSpec) {
	// serviceAccount is the deprecated alias of serviceAccountName: kube
	// keeps the two equal, serviceAccountName winning.
	if sp.ServiceAccountName == "" {
		sp.ServiceAccountName = sp.DeprecatedServiceAccount
	}
	sp.DeprecatedServiceAccount = sp.ServiceAccountName
	for i := range sp.Volumes {
		defaultVolume(&sp.Volumes[i])
	}
	for i := range sp.InitContainers {
		defaultContainerParts(&sp.InitContainers[i])
	}
	for i := range sp.Containers {
		defaultContainerParts(&sp.Containers[i])
	}
	for i := range sp.EphemeralContainers {
		c := (*corev1.Container)(&sp.EphemeralContainers[i].EphemeralContainerCommon)
		defaultContainer(c)
		defaultContainerParts(c)
	}
	roundResources(sp.Overhead)
	if sp.Resources != nil {
		roundResources(sp.Resources.Limits)
		roundResources(sp.Resources.Requests)
	}
}

// defaultVolume: a volume without a source is an emptyDir; modes of the
// file-projecting sources default to 0644 (420); fieldRefs to v1.
func defaultVolume(v *corev1.Volume) {
	vs := &v.VolumeSource
	if *vs == (corev1.VolumeSource{}) {
		vs.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	mode := func(p **int32, v int32) { *p = defaultPtr(*p, v) }
	if vs.HostPath != nil {
		vs.HostPath.Type = defaultPtr(vs.HostPath.Type, corev1.HostPathUnset)
	}
	if vs.Secret != nil {
		mode(&vs.Secret.DefaultMode, corev1.SecretVolumeSourceDefaultMode)
	}
	if vs.ConfigMap != nil {
		mode(&vs.ConfigMap.DefaultMode, corev1.ConfigMapVolumeSourceDefaultMode)
	}
	if d := vs.DownwardAPI; d != nil {
		mode(&d.DefaultMode, corev1.DownwardAPIVolumeSourceDefaultMode)
		defaultDownwardAPIItems(d.Items)
	}
	if p := vs.Projected; p != nil {
		mode(&p.DefaultMode, corev1.ProjectedVolumeSourceDefaultMode)
		for i := range p.Sources {
			src := &p.Sources[i]
			if src.DownwardAPI != nil {
				defaultDownwardAPIItems(src.DownwardAPI.Items)
			}
			if t := src.ServiceAccountToken; t != nil {
				t.ExpirationSeconds = defaultPtr(t.ExpirationSeconds, 3600)
			}
		}
	}
	if s := vs.ISCSI; s != nil {
		defaultString(&s.ISCSIInterface, "default")
	}
	if s := vs.RBD; s != nil {
		defaultString(&s.RBDPool, "rbd")
		defaultString(&s.RadosUser, "admin")
		defaultString(&s.Keyring, "/etc/ceph/keyring")
	}
	if s := vs.AzureDisk; s != nil {
		s.CachingMode = defaultPtr(s.CachingMode, corev1.AzureDataDiskCachingReadWrite)
		s.FSType = defaultPtr(s.FSType, "ext4")
		s.ReadOnly = defaultPtr(s.ReadOnly, false)
		s.Kind = defaultPtr(s.Kind, corev1.AzureSharedBlobDisk)
	}
	if s := vs.ScaleIO; s != nil {
		defaultString(&s.StorageMode, "ThinProvisioned")
		defaultString(&s.FSType, "xfs")
	}
	if e := vs.Ephemeral; e != nil && e.VolumeClaimTemplate != nil {
		spec := &e.VolumeClaimTemplate.Spec
		spec.VolumeMode = defaultPtr(spec.VolumeMode, corev1.PersistentVolumeFilesystem)
		roundResources(spec.Resources.Limits)
		roundResources(spec.Resources.Requests)
	}
	if img := v.Image; img != nil && img.PullPolicy == "" {
		img.PullPolicy = imagePullPolicy(img.Reference)
	}
}

func defaultDownwardAPIItems(items []corev1.DownwardAPIVolumeFile) {
	for i := range items {
		if items[i].FieldRef != nil {
			defaultString(&items[i].FieldRef.APIVersion, "v1")
		}
	}
}

// defaultContainerParts defaults what SetDefaults_Container leaves to the
// generated walk: env sources, resources, probes and lifecycle handlers.
func defaultContainerParts(c *corev1.Container) {
	for i := range c.Ports {
		defaultString(&c.Ports[i].Protocol, corev1.ProtocolTCP)
	}
	for i := range c.Env {
		vf := c.Env[i].ValueFrom
		if vf == nil {
			continue
		}
		if vf.FieldRef != nil {
			defaultString(&vf.FieldRef.APIVersion, "v1")
		}
		if vf.FileKeyRef != nil {
			vf.FileKeyRef.Optional = defaultPtr(vf.FileKeyRef.Optional, false)
		}
	}
	roundResources(c.Resources.Limits)
	roundResources(c.Resources.Requests)
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		defaultProbe(p)
	}
	if l := c.Lifecycle; l != nil {
		for _, h := range []*corev1.LifecycleHandler{l.PostStart, l.PreStop} {
			if h != nil {
				defaultHTTPGet(h.HTTPGet)
			}
		}
	}
}

// defaultProbe is SetDefaults_Probe with its handler's defaults.
func defaultProbe(p *corev1.Probe) {
	if p == nil {
		return
	}
	for _, f := range []struct {
		v   *int32
		def int32
	}{{&p.TimeoutSeconds, 1}, {&p.PeriodSeconds, 10}, {&p.SuccessThreshold, 1}, {&p.FailureThreshold, 3}} {
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	defaultHTTPGet(p.HTTPGet)
	if p.GRPC != nil {
		p.GRPC.Service = defaultPtr(p.GRPC.Service, "")
	}
}

// defaultHTTPGet is SetDefaults_HTTPGetAction.
func defaultHTTPGet(h *corev1.HTTPGetAction) {
	if h == nil {
		return
	}
	defaultString(&h.Path, "/")
	defaultString(&h.Scheme, corev1.URISchemeHTTP)
}

// roundResources is SetDefaults_ResourceList: quantities are rounded up
// to milli precision.
func roundResources(rl corev1.ResourceList) {
	for name, q := range rl {
		q.RoundUp(apiresource.Milli)
		rl[name] = q
	}
}

// defaultPodOnly is the part of SetDefaults_Pod that pod templates do not
// get: a negative grace period becomes 1, requests default to limits,
// hostNetwork pods' container ports are host ports.
func defaultPodOnly(sp *corev1.PodSpec) {
	if g := sp.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		one := int64(1)
		sp.TerminationGracePeriodSeconds = &one
	}
	for _, cs := range [][]corev1.Container{sp.Containers, sp.InitContainers} {
		for i := range cs {
			r := &cs[i].Resources
			if r.Limits == nil {
				continue
			}
			if r.Requests == nil {
				r.Requests = corev1.ResourceList{}
			}
			for name, q := range r.Limits {
				if _, ok := r.Requests[name]; !ok {
					r.Requests[name] = q.DeepCopy()
				}
			}
		}
	}
	if sp.HostNetwork {
		for _, cs := range [][]corev1.Container{sp.Containers, sp.InitContainers} {
			for i := range cs {
				for j := range cs[i].Ports {
					if cs[i].Ports[j].HostPort == 0 {
						cs[i].Ports[j].HostPort = cs[i].Ports[j].ContainerPort
					}
				}
			}
		}
	}
}

// defaultPodStatusIPs is SetDefaults_PodStatus: podIP and podIPs agree,
// podIP winning.
func defaultPodStatusIPs(st *corev1.PodStatus) {
	switch hasIP, hasIPs := st.PodIP != "", len(st.PodIPs) > 0; {
	case hasIP && !hasIPs:
		st.PodIPs = []corev1.PodIP{{IP: st.PodIP}}
	case !hasIP && hasIPs:
		st.PodIP = st.PodIPs[0].IP
	case hasIP && hasIPs && st.PodIPs[0].IP != st.PodIP:
		st.PodIPs = []corev1.PodIP{{IP: st.PodIP}}
	}
}
