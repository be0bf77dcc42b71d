package quota

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	resourcehelper "k8s.io/component-helpers/resource"
)

// The store's names of the resources with their own evaluator.
const (
	Pods     = "pods"
	Services = "services"
	Claims   = "persistentvolumeclaims"
)

// storageClassSuffix joins a storage class name to the claim resources
// counted per class ("gold.storageclass.storage.k8s.io/requests.storage").
const storageClassSuffix = ".storageclass.storage.k8s.io/"

// legacy are the resources also counted under their plural alone.
var legacy = map[string]bool{"secrets": true, "configmaps": true, "replicationcontrollers": true, "resourcequotas": true}

// podNames are the quota resources the pod evaluator counts (besides the
// hugepages and extended "requests." names).
var podNames = []corev1.ResourceName{"count/pods", corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage, corev1.ResourcePods}

// validation are the resources each container must state when a quota
// limits them (kube's backward-compatibility rule).
var validation = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceRequestsCPU,
	corev1.ResourceRequestsMemory, corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory}

// ResourceOf returns the store resource whose evaluator counts the quota
// resource name ("" when none does): "count/deployments.apps" is
// "deployments.apps", "requests.cpu" is "pods".
func ResourceOf(name corev1.ResourceName) string {
	n := string(name)
	switch {
	case strings.HasPrefix(n, "count/"):
		return strings.TrimPrefix(n, "count/")
	case legacy[n]:
		return n
	}
	for _, r := range []string{Claims, Services, Pods} {
		if Covers(r, name) {
			return r
		}
	}
	return ""
}

// Covers reports whether the evaluator of resource counts name.
func Covers(resource string, name corev1.ResourceName) bool {
	n := string(name)
	if n == "count/"+resource || (legacy[resource] && n == resource) {
		return true
	}
	switch resource {
	case Pods:
		return slices.Contains(podNames, name) || strings.HasPrefix(n, corev1.ResourceHugePagesPrefix) ||
			strings.HasPrefix(n, corev1.ResourceRequestsHugePagesPrefix) ||
			(strings.HasPrefix(n, corev1.DefaultResourceRequestsPrefix) && isExtended(strings.TrimPrefix(n, corev1.DefaultResourceRequestsPrefix)))
	case Services:
		return name == corev1.ResourceServices || name == corev1.ResourceServicesNodePorts || name == corev1.ResourceServicesLoadBalancers
	case Claims:
		return name == corev1.ResourcePersistentVolumeClaims || name == corev1.ResourceRequestsStorage ||
			(strings.Contains(n, storageClassSuffix) && (strings.HasSuffix(n, storageClassSuffix+string(corev1.ResourceRequestsStorage)) ||
				strings.HasSuffix(n, storageClassSuffix+string(corev1.ResourcePersistentVolumeClaims))))
	}
	return false
}

// Covered returns the names of hard the evaluator of resource counts.
func Covered(resource string, hard corev1.ResourceList) []corev1.ResourceName {
	var out []corev1.ResourceName
	for n := range hard {
		if Covers(resource, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// isExtended reports whether name is an extended resource
// ("example.com/dongle"): qualified by a domain other than kubernetes.io.
func isExtended(name string) bool {
	return strings.Contains(name, "/") && !strings.Contains(name, "kubernetes.io/") &&
		!strings.HasPrefix(name, corev1.DefaultResourceRequestsPrefix)
}

func one() resource.Quantity { return *resource.NewQuantity(1, resource.DecimalSI) }

// Usage returns what obj, an object of resource, uses; now decides
// whether a pod being deleted is past its grace period. obj may be of any
// type for resources without their own evaluator (only its existence
// counts).
func Usage(resource string, obj runtime.Object, now time.Time) corev1.ResourceList {
	switch o := obj.(type) {
	case *corev1.Pod:
		return podUsage(o, now)
	case *corev1.Service:
		return serviceUsage(o)
	case *corev1.PersistentVolumeClaim:
		return claimUsage(o)
	}
	out := corev1.ResourceList{corev1.ResourceName("count/" + resource): one()}
	if legacy[resource] {
		out[corev1.ResourceName(resource)] = one()
	}
	return out
}

// Counted reports whether pod uses compute quota: not terminal and not
// being deleted past its grace period (kube's QuotaV1Pod).
func Counted(pod *corev1.Pod, now time.Time) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	if end, ok := GraceEnd(pod); ok && now.After(end) {
		return false
	}
	return true
}

// GraceEnd returns when a pod being deleted stops counting.
func GraceEnd(pod *corev1.Pod) (time.Time, bool) {
	if pod.DeletionTimestamp == nil || pod.DeletionGracePeriodSeconds == nil {
		return time.Time{}, false
	}
	return pod.DeletionTimestamp.Add(time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second), true
}

func podUsage(pod *corev1.Pod, now time.Time) corev1.ResourceList {
	out := corev1.ResourceList{"count/pods": one()} // every stored pod
	if !Counted(pod, now) {
		return out
	}
	opts := resourcehelper.PodResourcesOptions{}
	for k, v := range computeUsage(resourcehelper.PodRequests(pod, opts), resourcehelper.PodLimits(pod, opts)) {
		out[k] = v
	}
	return out
}

// computeUsage maps requests and limits to the quota names (kube's
// podComputeUsageHelper).
func computeUsage(requests, limits corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{corev1.ResourcePods: one()}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		if v, ok := requests[r]; ok {
			out[r] = v
			out[corev1.ResourceName(corev1.DefaultResourceRequestsPrefix+string(r))] = v
		}
		if v, ok := limits[r]; ok {
			out[corev1.ResourceName("limits."+string(r))] = v
		}
	}
	for r, v := range requests {
		switch {
		case strings.HasPrefix(string(r), corev1.ResourceHugePagesPrefix):
			out[r] = v
			out[corev1.ResourceName(corev1.DefaultResourceRequestsPrefix+string(r))] = v
		case isExtended(string(r)):
			out[corev1.ResourceName(corev1.DefaultResourceRequestsPrefix+string(r))] = v
		}
	}
	return out
}

func serviceUsage(svc *corev1.Service) corev1.ResourceList {
	zero := resource.Quantity{Format: resource.DecimalSI}
	out := corev1.ResourceList{"count/services": one(), corev1.ResourceServices: one(),
		corev1.ResourceServicesLoadBalancers: zero, corev1.ResourceServicesNodePorts: zero}
	ports := int64(len(svc.Spec.Ports))
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		out[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
	case corev1.ServiceTypeLoadBalancer:
		if a := svc.Spec.AllocateLoadBalancerNodePorts; a != nil && !*a {
			ports = 0 // only the node ports asked for explicitly
			for _, p := range svc.Spec.Ports {
				if p.NodePort != 0 {
					ports++
				}
			}
		}
		out[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
		out[corev1.ResourceServicesLoadBalancers] = one()
	}
	return out
}

func claimUsage(pvc *corev1.PersistentVolumeClaim) corev1.ResourceList {
	out := corev1.ResourceList{"count/persistentvolumeclaims": one(), corev1.ResourcePersistentVolumeClaims: one()}
	class := ""
	if pvc.Spec.StorageClassName != nil {
		class = *pvc.Spec.StorageClassName
	} else if c, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		class = c
	}
	if class != "" {
		out[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourcePersistentVolumeClaims))] = one()
	}
	storage, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if a, found := pvc.Status.AllocatedResources[corev1.ResourceStorage]; found && (!ok || a.Cmp(storage) > 0) {
		storage, ok = a, true // a resize in progress counts its larger size
	}
	if ok {
		out[corev1.ResourceRequestsStorage] = storage
		if class != "" {
			out[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourceRequestsStorage))] = storage
		}
	}
	return out
}

// Selectors returns the scope selectors of q: its scopes (operator
// Exists) and its scopeSelector's expressions.
func Selectors(q *corev1.ResourceQuota) []corev1.ScopedResourceSelectorRequirement {
	var out []corev1.ScopedResourceSelectorRequirement
	for _, s := range q.Spec.Scopes {
		out = append(out, corev1.ScopedResourceSelectorRequirement{ScopeName: s, Operator: corev1.ScopeSelectorOpExists})
	}
	if q.Spec.ScopeSelector != nil {
		out = append(out, q.Spec.ScopeSelector.MatchExpressions...)
	}
	return out
}

// Matches reports whether quota q, whose limits are hard (the controller
// uses spec.hard, admission status.hard, as kube), constrains obj of
// resource: hard names something its evaluator counts, and every scope of
// q selects obj (only pods have scopes; a scoped quota matches nothing
// else).
func Matches(q *corev1.ResourceQuota, hard corev1.ResourceList, resource string, obj runtime.Object) bool {
	covered := false
	for n := range hard {
		if Covers(resource, n) {
			covered = true
			break
		}
	}
	if !covered {
		return false
	}
	pod, _ := obj.(*corev1.Pod)
	for _, s := range Selectors(q) {
		if pod == nil || !podInScope(pod, s) {
			return false
		}
	}
	return true
}

func podInScope(pod *corev1.Pod, s corev1.ScopedResourceSelectorRequirement) bool {
	switch s.ScopeName {
	case corev1.ResourceQuotaScopeTerminating:
		return terminating(pod)
	case corev1.ResourceQuotaScopeNotTerminating:
		return !terminating(pod)
	case corev1.ResourceQuotaScopeBestEffort:
		return bestEffort(pod)
	case corev1.ResourceQuotaScopeNotBestEffort:
		return !bestEffort(pod)
	case corev1.ResourceQuotaScopePriorityClass:
		return priorityInScope(pod.Spec.PriorityClassName, s)
	case corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return crossNamespaceAffinity(pod)
	}
	return false
}

func terminating(pod *corev1.Pod) bool {
	return pod.Spec.ActiveDeadlineSeconds != nil && *pod.Spec.ActiveDeadlineSeconds >= 0
}

// bestEffort: no container (nor the pod) requests or limits cpu or memory.
func bestEffort(pod *corev1.Pod) bool {
	stated := func(l corev1.ResourceList) bool {
		_, c := l[corev1.ResourceCPU]
		_, m := l[corev1.ResourceMemory]
		return c || m
	}
	if pod.Spec.Resources != nil && (stated(pod.Spec.Resources.Requests) || stated(pod.Spec.Resources.Limits)) {
		return false
	}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if stated(c.Resources.Requests) || stated(c.Resources.Limits) {
				return false
			}
		}
	}
	return true
}

func priorityInScope(class string, s corev1.ScopedResourceSelectorRequirement) bool {
	var op selection.Operator
	switch s.Operator {
	case corev1.ScopeSelectorOpExists:
		return class != ""
	case corev1.ScopeSelectorOpDoesNotExist:
		return class == ""
	case corev1.ScopeSelectorOpIn:
		op = selection.In
	case corev1.ScopeSelectorOpNotIn:
		op = selection.NotIn
	default:
		return false
	}
	req, err := labels.NewRequirement(string(s.ScopeName), op, s.Values)
	if err != nil {
		return false
	}
	return req.Matches(labels.Set{string(s.ScopeName): class})
}

func crossNamespaceAffinity(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	if a == nil {
		return false
	}
	var terms []corev1.PodAffinityTerm
	if a.PodAffinity != nil {
		terms = append(terms, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	if a.PodAntiAffinity != nil {
		terms = append(terms, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	for _, t := range terms {
		if len(t.Namespaces) > 0 || t.NamespaceSelector != nil {
			return true
		}
	}
	return false
}

// Constraints returns kube's "must specify ..." error when a container
// of pod does not state a resource among required (the names a matching
// quota limits) that kube requires every container to state: cpu, memory
// and their requests and limits. Pods with pod-level resources are exempt.
func Constraints(pod *corev1.Pod, required []corev1.ResourceName) error {
	var need []corev1.ResourceName
	for _, r := range required {
		if slices.Contains(validation, r) {
			need = append(need, r)
		}
	}
	if len(need) == 0 || resourcehelper.IsPodLevelResourcesSet(pod) {
		return nil
	}
	missing := map[corev1.ResourceName][]string{}
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, c := range cs {
			has := computeUsage(c.Resources.Requests, c.Resources.Limits)
			for _, r := range need {
				if _, ok := has[r]; !ok && !slices.Contains(missing[r], c.Name) {
					missing[r] = append(missing[r], c.Name)
				}
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	names := make([]corev1.ResourceName, 0, len(missing))
	for r := range missing {
		names = append(names, r)
	}
	slices.Sort(names)
	msgs := make([]string, len(names))
	for i, r := range names {
		cs := missing[r]
		slices.Sort(cs)
		msgs[i] = fmt.Sprintf("%s for: %s", r, strings.Join(cs, ","))
	}
	return fmt.Errorf("must specify %s", strings.Join(msgs, "; "))
}
