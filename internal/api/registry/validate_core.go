package registry

import (
	"fmt"
	"maps"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Kind-specific validation (the registry rows' Validate), with kube's
// field paths and messages: what kube-apiserver 1.37 rejects that a client
// can plausibly send. Each function takes the new object and, on update,
// the stored one (nil on create). Metadata is validated by admission for
// every kind; these check the rest, a chosen subset of kube's rules:
// required fields, selectors that match their template, and fields that
// are immutable once set. The kinds of each API group other than core are
// in validate_<group>.go.

// maxDataBytes is kube's limit on a ConfigMap's or Secret's data.
const maxDataBytes = 1 << 20

// immutableWhenSet is kube's word for a change to an object with
// immutable: true.
const immutableWhenSet = "field is immutable when `immutable` is set"

func validateConfigMap(obj, old runtime.Object) field.ErrorList {
	cm := obj.(*corev1.ConfigMap)
	var errs field.ErrorList
	if old, ok := old.(*corev1.ConfigMap); ok && isTrue(old.Immutable) {
		if !isTrue(cm.Immutable) {
			errs = append(errs, field.Forbidden(field.NewPath("immutable"), immutableWhenSet))
		}
		if !reflect.DeepEqual(cm.Data, old.Data) {
			errs = append(errs, field.Forbidden(field.NewPath("data"), immutableWhenSet))
		}
		if !reflect.DeepEqual(cm.BinaryData, old.BinaryData) {
			errs = append(errs, field.Forbidden(field.NewPath("binaryData"), immutableWhenSet))
		}
	}
	size := 0
	for _, key := range slices.Sorted(maps.Keys(cm.Data)) {
		path := field.NewPath("data").Key(key)
		for _, msg := range utilvalidation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(path, key, msg))
		}
		if _, dup := cm.BinaryData[key]; dup {
			errs = append(errs, field.Invalid(path, key, "duplicate of key present in binaryData"))
		}
		size += len(cm.Data[key])
	}
	for _, key := range slices.Sorted(maps.Keys(cm.BinaryData)) {
		for _, msg := range utilvalidation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(field.NewPath("binaryData").Key(key), key, msg))
		}
		size += len(cm.BinaryData[key])
	}
	if size > maxDataBytes {
		// the empty path: the error is about the whole object
		errs = append(errs, field.TooLong(field.NewPath(""), "", maxDataBytes))
	}
	return errs
}

func validateSecret(obj, old runtime.Object) field.ErrorList {
	sec := obj.(*corev1.Secret)
	var errs field.ErrorList
	if old, ok := old.(*corev1.Secret); ok {
		errs = append(errs, validation.ValidateImmutableField(sec.Type, old.Type, field.NewPath("type"))...)
		if isTrue(old.Immutable) {
			if !isTrue(sec.Immutable) {
				errs = append(errs, field.Forbidden(field.NewPath("immutable"), immutableWhenSet))
			}
			if !reflect.DeepEqual(sec.Data, old.Data) {
				errs = append(errs, field.Forbidden(field.NewPath("data"), immutableWhenSet))
			}
		}
	}
	data := field.NewPath("data")
	size := 0
	for _, key := range slices.Sorted(maps.Keys(sec.Data)) {
		for _, msg := range utilvalidation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(data.Key(key), key, msg))
		}
		size += len(sec.Data[key])
	}
	if size > maxDataBytes {
		errs = append(errs, field.TooLong(data, "", maxDataBytes))
	}
	required := map[corev1.SecretType][]string{
		corev1.SecretTypeDockercfg:           {corev1.DockerConfigKey},
		corev1.SecretTypeDockerConfigJson:    {corev1.DockerConfigJsonKey},
		corev1.SecretTypeSSHAuth:             {corev1.SSHAuthPrivateKey},
		corev1.SecretTypeTLS:                 {corev1.TLSCertKey, corev1.TLSPrivateKeyKey},
		corev1.SecretTypeServiceAccountToken: nil,
	}[sec.Type]
	for _, key := range required {
		if _, ok := sec.Data[key]; !ok {
			errs = append(errs, field.Required(data.Key(key), ""))
		}
	}
	if sec.Type == corev1.SecretTypeServiceAccountToken && sec.Annotations[corev1.ServiceAccountNameKey] == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "annotations").Key(corev1.ServiceAccountNameKey), ""))
	}
	if sec.Type == corev1.SecretTypeBasicAuth {
		_, user := sec.Data[corev1.BasicAuthUsernameKey]
		_, pass := sec.Data[corev1.BasicAuthPasswordKey]
		if !user && !pass {
			errs = append(errs, field.Required(data.Key(corev1.BasicAuthUsernameKey), ""),
				field.Required(data.Key(corev1.BasicAuthPasswordKey), ""))
		}
	}
	return errs
}

// validateService: the cluster IPs of a service may not change once
// allocated, unless it is or becomes an ExternalName service, or stays
// headless. An update that leaves them out is not refused here (kube
// carries the allocated ones over before validating).
func validateService(obj, old runtime.Object) field.ErrorList {
	svc := obj.(*corev1.Service)
	prev, ok := old.(*corev1.Service)
	if !ok && takesKubernetesServiceIP(svc) {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "clusterIPs"), svc.Spec.ClusterIPs,
			"failed to allocate IP "+kubernetesServiceIP+": provided IP is already allocated")}
	}
	errs := validateServiceType(svc)
	if !ok || svc.Spec.Type == corev1.ServiceTypeExternalName || prev.Spec.Type == corev1.ServiceTypeExternalName ||
		(isHeadless(svc) && isHeadless(prev)) || len(svc.Spec.ClusterIPs) == 0 {
		return errs
	}
	ips := field.NewPath("spec", "clusterIPs")
	for i, ip := range prev.Spec.ClusterIPs {
		if i < len(svc.Spec.ClusterIPs) && svc.Spec.ClusterIPs[i] != ip {
			errs = append(errs, field.Invalid(ips.Index(i), svc.Spec.ClusterIPs, "may not change once set"))
		}
	}
	return errs
}

// validateServiceType: what kube's ValidateService says of the fields
// that depend on the type: an ExternalName service has no cluster IPs or
// IP families, a ClusterIP service no node ports, and node ports are in
// the node port range.
func validateServiceType(svc *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		if len(svc.Spec.ClusterIPs) > 0 || svc.Spec.ClusterIP != "" {
			errs = append(errs, field.Forbidden(spec.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
		if len(svc.Spec.IPFamilies) > 0 {
			errs = append(errs, field.Forbidden(spec.Child("ipFamilies"), "may not be set for ExternalName services"))
		}
		if svc.Spec.IPFamilyPolicy != nil {
			errs = append(errs, field.Forbidden(spec.Child("ipFamilyPolicy"), "may not be set for ExternalName services"))
		}
	}
	for i, p := range svc.Spec.Ports {
		np := spec.Child("ports").Index(i).Child("nodePort")
		switch {
		case p.NodePort == 0:
		case svc.Spec.Type == corev1.ServiceTypeClusterIP:
			errs = append(errs, field.Forbidden(np, "may not be used when `type` is 'ClusterIP'"))
		case p.NodePort < NodePortBase || p.NodePort >= NodePortBase+NodePortSize:
			errs = append(errs, field.Invalid(np, p.NodePort, fmt.Sprintf(
				"provided port is not in the valid range. The range of valid ports is %d-%d", NodePortBase, NodePortBase+NodePortSize-1)))
		}
	}
	return errs
}

func isHeadless(svc *corev1.Service) bool {
	return svc.Spec.ClusterIP == corev1.ClusterIPNone
}

// validatePersistentVolumeClaim: access modes and a storage request are
// required; once created, a claim's spec may change only in its storage
// request (not below the previous one), its volume attributes class and,
// once, its volume name.
func validatePersistentVolumeClaim(obj, old runtime.Object) field.ErrorList {
	pvc := obj.(*corev1.PersistentVolumeClaim)
	errs := validateClaimSpec(&pvc.Spec, field.NewPath("spec"))
	prev, ok := old.(*corev1.PersistentVolumeClaim)
	if !ok {
		return errs
	}
	was, now := prev.Spec.DeepCopy(), pvc.Spec.DeepCopy()
	if was.VolumeName == "" {
		was.VolumeName = now.VolumeName
	}
	was.Resources.Requests, now.Resources.Requests = nil, nil
	was.VolumeAttributesClassName, now.VolumeAttributesClassName = nil, nil
	if !apiequality.Semantic.DeepEqual(was, now) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"),
			"spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"+
				diff.Diff(was, now)))
	}
	oldSize, newSize := prev.Spec.Resources.Requests[corev1.ResourceStorage], pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if newSize.Cmp(oldSize) < 0 && newSize.Cmp(prev.Status.Capacity[corev1.ResourceStorage]) <= 0 {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "resources", "requests", "storage"),
			"field can not be less than status.capacity"))
	}
	return errs
}

// validateClaimSpec checks what every claim spec needs: access modes and a
// positive storage request (unless it is bound to a volume or has a data
// source that provides one).
func validateClaimSpec(sp *corev1.PersistentVolumeClaimSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(sp.AccessModes) == 0 {
		errs = append(errs, field.Required(path.Child("accessModes"), "at least 1 access mode is required"))
	}
	storage := path.Child("resources").Key(string(corev1.ResourceStorage))
	switch q, ok := sp.Resources.Requests[corev1.ResourceStorage]; {
	case !ok:
		errs = append(errs, field.Required(storage, ""))
	case q.Sign() <= 0:
		errs = append(errs, field.Invalid(storage, q.String(), "must be greater than zero"))
	}
	return errs
}

// validatePersistentVolume: a capacity with a storage size and access
// modes are required.
func validatePersistentVolume(obj, _ runtime.Object) field.ErrorList {
	pv := obj.(*corev1.PersistentVolume)
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if len(pv.Spec.AccessModes) == 0 {
		errs = append(errs, field.Required(spec.Child("accessModes"), ""))
	}
	switch _, ok := pv.Spec.Capacity[corev1.ResourceStorage]; {
	case len(pv.Spec.Capacity) == 0:
		errs = append(errs, field.Required(spec.Child("capacity"), ""))
	case !ok || len(pv.Spec.Capacity) > 1:
		errs = append(errs, field.NotSupported(spec.Child("capacity"), pv.Spec.Capacity,
			[]corev1.ResourceName{corev1.ResourceStorage}))
	}
	return errs
}

func validatePodTemplate(obj, _ runtime.Object) field.ErrorList {
	pt := obj.(*corev1.PodTemplate)
	return validatePodTemplateSpec(&pt.Template, field.NewPath("template"))
}

// validateReplicationController: replicas not negative, a selector (the
// template's labels by default) that the template matches, pods that
// restart Always; the selector is immutable (kube lets it change, but
// then the controller loses its pods; litek8s keeps it like the apps
// kinds).
func validateReplicationController(obj, _ runtime.Object) field.ErrorList {
	rc := obj.(*corev1.ReplicationController)
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if rc.Spec.Replicas != nil {
		errs = append(errs, validateNonnegative(int64(*rc.Spec.Replicas), spec.Child("replicas"))...)
	}
	errs = append(errs, validateNonnegative(int64(rc.Spec.MinReadySeconds), spec.Child("minReadySeconds"))...)
	if len(rc.Spec.Selector) == 0 {
		errs = append(errs, field.Required(spec.Child("selector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabels(rc.Spec.Selector, spec.Child("selector"))...)
	}
	if rc.Spec.Template == nil {
		return append(errs, field.Required(spec.Child("template"), ""))
	}
	t := rc.Spec.Template
	if len(rc.Spec.Selector) > 0 && !labelsMatch(rc.Spec.Selector, t.Labels) {
		errs = append(errs, field.Invalid(spec.Child("template", "metadata", "labels"), t.Labels,
			"`selector` does not match template `labels`"))
	}
	errs = append(errs, validatePodTemplateSpec(t, spec.Child("template"))...)
	return append(errs, validateRestartAlways(t, spec.Child("template"), "ReplicationController")...)
}

func isTrue(b *bool) bool { return b != nil && *b }
