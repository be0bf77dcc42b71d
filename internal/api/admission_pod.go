package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/litek8s/litek8s/internal/kv"
)

// Pod admission: the mutations kube-apiserver's default admission plugins
// make to a new pod, which need other objects (its ServiceAccount, the
// PriorityClasses): ServiceAccount, DefaultTolerationSeconds and Priority.
// They run on the leader after defaulting and managedFields, before the
// generic create metadata, as kube's mutating admission does; what they
// add is not attributed to the writer.

const (
	// mirrorPodAnnotation marks a static pod's mirror (kube's
	// MirrorPodAnnotationKey).
	mirrorPodAnnotation = "kubernetes.io/config.mirror"
	// serviceAccountVolumePrefix starts the name of the token volume.
	serviceAccountVolumePrefix = "kube-api-access-"
	// serviceAccountMountPath is where containers find their token.
	serviceAccountMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	// tokenExpirationSeconds is kube's WarnOnlyBoundTokenExpirationSeconds.
	tokenExpirationSeconds = 3607
	// defaultTolerationSeconds: how long pods stay on a not-ready or
	// unreachable node (kube's default-not-ready-toleration-seconds).
	defaultTolerationSeconds = 300
)

// defaultServiceAccountAttempts bounds the lookups of a missing "default"
// ServiceAccount, which its controller creates right after the namespace:
// kube tries 10 times, 100-200ms apart; litek8s allows 20 (about 3 s), as
// its controller shares the leader's CPU with the request.
const defaultServiceAccountAttempts = 20

// priorityClassesKey is where the store keeps PriorityClasses.
const priorityClassesKey = "priorityclasses.scheduling.k8s.io"

// admitCreateFromStore runs the create-time admission plugins that read
// other objects: LimitRanger and the pod plugins on a new pod,
// LimitRanger and DefaultStorageClass on a new claim, the Priority plugin's
// single-default check on a new PriorityClass, the node ports of a new
// Service.
func (s *Server) admitCreateFromStore(ctx context.Context, q *request, obj runtime.Object) error {
	if q.subresource != "" {
		return nil
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		if err := s.admitLimitRangerPod(ctx, o); err != nil {
			return err
		}
		return s.admitPodCreate(ctx, q, o)
	case *schedulingv1.PriorityClass:
		return s.admitPriorityClassCreate(ctx, o)
	case *corev1.PersistentVolumeClaim:
		if err := s.admitLimitRangerClaim(ctx, o); err != nil {
			return err
		}
		return s.admitDefaultStorageClass(ctx, o)
	case *corev1.Service:
		return s.admitServiceCreate(ctx, o)
	}
	return nil
}

// admitPriorityClassCreate refuses a second global default class (kube's
// Priority plugin).
func (s *Server) admitPriorityClassCreate(ctx context.Context, pc *schedulingv1.PriorityClass) error {
	if !pc.GlobalDefault {
		return nil
	}
	dpc, err := s.defaultPriorityClass(ctx)
	if err != nil {
		return fmt.Errorf("failed to get default priority class: %v", err)
	}
	if dpc != nil {
		return apierrors.NewForbidden(schedulingv1.Resource("priorityclasses"), pc.Name,
			fmt.Errorf("PriorityClass %v is already marked as default. Only one default can exist", dpc.Name))
	}
	return nil
}

// admitPodCreate runs the pod admission plugins on a new pod of q.
func (s *Server) admitPodCreate(ctx context.Context, q *request, pod *corev1.Pod) error {
	if err := s.admitServiceAccount(ctx, q, pod); err != nil {
		return err
	}
	if err := s.admitRuntimeClass(ctx, pod); err != nil {
		return err
	}
	addDefaultTolerations(pod)
	return s.admitPriority(ctx, pod)
}

// admitPodUpdate is what the plugins do on an update of a pod: the
// default tolerations stay, priority and preemptionPolicy carry over. A
// status update keeps the qosClass set on create (kube's pod status
// strategy).
func admitPodUpdate(q *request, obj, old runtime.Object) {
	pod, ok := obj.(*corev1.Pod)
	prev, okOld := old.(*corev1.Pod)
	if !ok || !okOld {
		return
	}
	if pod.Status.QOSClass == "" {
		pod.Status.QOSClass = prev.Status.QOSClass
	}
	if q.subresource != "" {
		return
	}
	addDefaultTolerations(pod)
	if pod.Spec.Priority == nil {
		pod.Spec.Priority = prev.Spec.Priority
	}
	if pod.Spec.PreemptionPolicy == nil {
		pod.Spec.PreemptionPolicy = prev.Spec.PreemptionPolicy
	}
}

// podForbidden is kube's admission.NewForbidden for a pod: the pod's
// name, else its generateName, else "Unknown".
func podForbidden(pod *corev1.Pod, err error) error {
	name := pod.Name
	if name == "" {
		name = pod.GenerateName
	}
	if name == "" {
		name = "Unknown"
	}
	return apierrors.NewForbidden(corev1.Resource("pods"), name, err)
}

// admitServiceAccount is kube's ServiceAccount plugin: the pod runs as
// "default" unless it names an account, which must exist; its token, the
// cluster CA and its namespace are mounted in every (init) container
// unless automounting is off; it inherits the account's image pull
// secrets. Mirror pods may reference no account and no secret.
func (s *Server) admitServiceAccount(ctx context.Context, q *request, pod *corev1.Pod) error {
	if _, mirror := pod.Annotations[mirrorPodAnnotation]; mirror {
		return validateMirrorPod(pod)
	}
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = "default"
		pod.Spec.DeprecatedServiceAccount = "default"
	}
	sa, err := s.serviceAccount(ctx, q.namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return podForbidden(pod, fmt.Errorf("error looking up service account %s/%s: %w", q.namespace, pod.Spec.ServiceAccountName, err))
	}
	if automountToken(sa, pod) {
		mountServiceAccountToken(pod)
	}
	if len(pod.Spec.ImagePullSecrets) == 0 && len(sa.ImagePullSecrets) > 0 {
		for _, ref := range sa.ImagePullSecrets {
			pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: ref.Name})
		}
	}
	return nil
}

// serviceAccount reads a ServiceAccount, waiting a little for "default".
func (s *Server) serviceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
	attempts := 1
	if name == "default" {
		attempts = defaultServiceAccountAttempts
	}
	for i := 0; ; i++ {
		o, _, err := s.store.Get(ctx, kv.Key{Resource: "serviceaccounts", Namespace: namespace, Name: name}, false)
		if err == nil {
			sa := &corev1.ServiceAccount{}
			return sa, json.Unmarshal(o.Raw, sa)
		}
		if !errors.Is(err, kv.ErrNotFound) {
			return nil, err
		}
		if i+1 >= attempts {
			return nil, apierrors.NewNotFound(corev1.Resource("serviceaccount"), name)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100*time.Millisecond + time.Duration(i%2)*50*time.Millisecond):
		}
	}
}

// automountToken: the pod's automountServiceAccountToken, else the
// account's, else true.
func automountToken(sa *corev1.ServiceAccount, pod *corev1.Pod) bool {
	if p := pod.Spec.AutomountServiceAccountToken; p != nil {
		return *p
	}
	if p := sa.AutomountServiceAccountToken; p != nil {
		return *p
	}
	return true
}

// mountServiceAccountToken adds the kube-api-access volume (unless the
// pod has one) and mounts it read-only in every init and regular
// container that mounts nothing at the token path; ephemeral containers
// get none, as in kube.
func mountServiceAccountToken(pod *corev1.Pod) {
	name, have := "", false
	for _, v := range pod.Spec.Volumes {
		if strings.HasPrefix(v.Name, serviceAccountVolumePrefix) {
			name, have = v.Name, true
			break
		}
	}
	if name == "" {
		name = generateName(serviceAccountVolumePrefix)
	}
	mount := corev1.VolumeMount{Name: name, ReadOnly: true, MountPath: serviceAccountMountPath}
	needed := false
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if !mountsAt(cs[i].VolumeMounts, serviceAccountMountPath) {
				cs[i].VolumeMounts = append(cs[i].VolumeMounts, mount)
				needed = true
			}
		}
	}
	if !have && needed {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: name,
			VolumeSource: corev1.VolumeSource{Projected: tokenVolumeSource()}})
	}
}

func mountsAt(mounts []corev1.VolumeMount, path string) bool {
	for _, m := range mounts {
		if m.MountPath == path {
			return true
		}
	}
	return false
}

// tokenVolumeSource is kube's TokenVolumeSource: a bound token, the
// cluster CA from kube-root-ca.crt and the pod's namespace.
func tokenVolumeSource() *corev1.ProjectedVolumeSource {
	mode := int32(corev1.ProjectedVolumeSourceDefaultMode)
	exp := int64(tokenExpirationSeconds)
	return &corev1.ProjectedVolumeSource{
		DefaultMode: &mode,
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &exp}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
				Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}
}

// validateMirrorPod: a mirror pod may reference no service account, no
// secret and no token projection (kube's ServiceAccount plugin).
func validateMirrorPod(pod *corev1.Pod) error {
	if pod.Spec.ServiceAccountName != "" {
		return podForbidden(pod, errors.New("a mirror pod may not reference service accounts"))
	}
	if podReferencesSecrets(&pod.Spec) {
		return podForbidden(pod, errors.New("a mirror pod may not reference secrets"))
	}
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.ServiceAccountToken != nil {
				return podForbidden(pod, errors.New("a mirror pod may not use ServiceAccountToken volume projections"))
			}
		}
	}
	return nil
}

// podReferencesSecrets reports whether the spec names any Secret: image
// pull secrets, secret volumes and projections, volume plugins' secret
// references, env and envFrom of every container.
func podReferencesSecrets(sp *corev1.PodSpec) bool {
	if len(sp.ImagePullSecrets) > 0 {
		return true
	}
	for _, v := range sp.Volumes {
		vs := v.VolumeSource
		switch {
		case vs.Secret != nil,
			vs.AzureFile != nil,
			vs.CephFS != nil && vs.CephFS.SecretRef != nil,
			vs.Cinder != nil && vs.Cinder.SecretRef != nil,
			vs.FlexVolume != nil && vs.FlexVolume.SecretRef != nil,
			vs.ISCSI != nil && vs.ISCSI.SecretRef != nil,
			vs.RBD != nil && vs.RBD.SecretRef != nil,
			vs.ScaleIO != nil && vs.ScaleIO.SecretRef != nil,
			vs.StorageOS != nil && vs.StorageOS.SecretRef != nil,
			vs.CSI != nil && vs.CSI.NodePublishSecretRef != nil:
			return true
		}
		if vs.Projected != nil {
			for _, src := range vs.Projected.Sources {
				if src.Secret != nil {
					return true
				}
			}
		}
	}
	refs := func(c *corev1.Container) bool {
		for _, e := range c.EnvFrom {
			if e.SecretRef != nil {
				return true
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				return true
			}
		}
		return false
	}
	for _, cs := range [][]corev1.Container{sp.InitContainers, sp.Containers} {
		for i := range cs {
			if refs(&cs[i]) {
				return true
			}
		}
	}
	for i := range sp.EphemeralContainers {
		if refs((*corev1.Container)(&sp.EphemeralContainers[i].EphemeralContainerCommon)) {
			return true
		}
	}
	return false
}

// addDefaultTolerations is kube's DefaultTolerationSeconds plugin: a pod
// that tolerates neither not-ready nor unreachable NoExecute taints
// (a toleration with an empty key or effect tolerates them) stays 300s
// on such a node.
func addDefaultTolerations(pod *corev1.Pod) {
	notReady, unreachable := false, false
	for _, t := range pod.Spec.Tolerations {
		if t.Effect != corev1.TaintEffectNoExecute && t.Effect != "" {
			continue
		}
		notReady = notReady || t.Key == corev1.TaintNodeNotReady || t.Key == ""
		unreachable = unreachable || t.Key == corev1.TaintNodeUnreachable || t.Key == ""
	}
	add := func(key string) {
		secs := int64(defaultTolerationSeconds)
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{Key: key,
			Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs})
	}
	if !notReady {
		add(corev1.TaintNodeNotReady)
	}
	if !unreachable {
		add(corev1.TaintNodeUnreachable)
	}
}

// admitPriority is kube's Priority plugin on pod create: spec.priority
// and preemptionPolicy come from the named PriorityClass (403 when there
// is none), else from the global default class (the lowest when several),
// else 0 and PreemptLowerPriority. A priority or policy the pod sets must
// agree.
func (s *Server) admitPriority(ctx context.Context, pod *corev1.Pod) error {
	var (
		name   = pod.Spec.PriorityClassName
		value  int32
		policy = corev1.PreemptLowerPriority
	)
	if name == "" {
		pc, err := s.defaultPriorityClass(ctx)
		if err != nil {
			return fmt.Errorf("error occurred while retrieving default priority class: %w", err)
		}
		if pc != nil {
			name, value = pc.Name, pc.Value
			if pc.PreemptionPolicy != nil {
				policy = *pc.PreemptionPolicy
			}
		}
	} else {
		o, _, err := s.store.Get(ctx, kv.Key{Resource: priorityClassesKey, Name: name}, false)
		if errors.Is(err, kv.ErrNotFound) {
			return podForbidden(pod, fmt.Errorf("no PriorityClass with name %v was found", name))
		}
		if err != nil {
			return fmt.Errorf("failed to resolve PriorityClass with name %s: %w", name, err)
		}
		value = int32(gjson.GetBytes(o.Raw, "value").Int())
		if p := gjson.GetBytes(o.Raw, "preemptionPolicy").Str; p != "" {
			policy = corev1.PreemptionPolicy(p)
		}
	}
	pod.Spec.PriorityClassName = name
	if p := pod.Spec.Priority; p != nil && *p != value {
		return podForbidden(pod, fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *p, value))
	}
	pod.Spec.Priority = &value
	if p := pod.Spec.PreemptionPolicy; p != nil && *p != policy {
		return podForbidden(pod, fmt.Errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *p, policy))
	}
	pod.Spec.PreemptionPolicy = &policy
	return nil
}

// defaultPriorityClass returns the global default PriorityClass with the
// lowest value, or nil.
func (s *Server) defaultPriorityClass(ctx context.Context) (*schedulingv1.PriorityClass, error) {
	l, err := s.store.List(ctx, priorityClassesKey, "", false)
	if err != nil {
		return nil, err
	}
	var best *schedulingv1.PriorityClass
	var decodeErr error
	l.Range("", func(o *kv.Object) bool {
		if !gjson.GetBytes(o.Raw, "globalDefault").Bool() {
			return true
		}
		if v := int32(gjson.GetBytes(o.Raw, "value").Int()); best == nil || v < best.Value {
			pc := &schedulingv1.PriorityClass{}
			if decodeErr = json.Unmarshal(o.Raw, pc); decodeErr != nil {
				return false
			}
			best = pc
		}
		return true
	})
	return best, decodeErr
}
