package api

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/litek8s/litek8s/internal/kv"
)

// LimitRanger admission (kube's plugin of that name), on the creation of
// a pod or a claim; updates are not checked, as kube's (containers and
// their resources cannot change, except through pods/resize, which is
// not served). A new pod's containers and init containers get the
// default limits and requests of every Container limit of the
// namespace's LimitRanges that they do not set, noted in the
// kubernetes.io/limit-ranger annotation; then the pod (each container,
// and the pod's totals for Pod limits) and a claim's storage request
// must lie within each limit's min, max and maxLimitRequestRatio, or the
// create is 403 with kube's messages.

// limitRangesKey is where the store keeps LimitRanges.
const limitRangesKey = "limitranges"

// limitRangerAnnotation records what the plugin set on a pod.
const limitRangerAnnotation = "kubernetes.io/limit-ranger"

// limitRanges reads the LimitRanges of namespace ns.
func (s *Server) limitRanges(ctx context.Context, ns string) ([]corev1.LimitRange, error) {
	l, err := s.store.List(ctx, limitRangesKey, ns, false)
	if err != nil {
		return nil, fmt.Errorf("unable to list LimitRanges: %w", err)
	}
	var out []corev1.LimitRange
	var decodeErr error
	l.Range("", func(o *kv.Object) bool {
		var lr corev1.LimitRange
		if decodeErr = json.Unmarshal(o.Raw, &lr); decodeErr != nil {
			return false
		}
		out = append(out, lr)
		return true
	})
	return out, decodeErr
}

// admitLimitRangerPod defaults and checks a new pod.
func (s *Server) admitLimitRangerPod(ctx context.Context, pod *corev1.Pod) error {
	lrs, err := s.limitRanges(ctx, pod.Namespace)
	if err != nil || len(lrs) == 0 {
		return err
	}
	for i := range lrs {
		setContainerDefaults(pod, &lrs[i])
	}
	var errs []error
	for i := range lrs {
		errs = append(errs, podLimitErrors(pod, &lrs[i])...)
	}
	if len(errs) > 0 {
		return podForbidden(pod, utilerrors.NewAggregate(errs))
	}
	return nil
}

// admitLimitRangerClaim checks a new claim's storage request.
func (s *Server) admitLimitRangerClaim(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error {
	lrs, err := s.limitRanges(ctx, pvc.Namespace)
	if err != nil || len(lrs) == 0 {
		return err
	}
	var errs []error
	for i := range lrs {
		for _, l := range lrs[i].Spec.Limits {
			if l.Type != corev1.LimitTypePersistentVolumeClaim {
				continue
			}
			for _, k := range sortedNames(l.Min) {
				errs = appendErr(errs, boundConstraint(false, l.Type, k, l.Min[k], quantities{"request", pvc.Spec.Resources.Requests}, quantities{"limit", nil}))
			}
			for _, k := range sortedNames(l.Max) {
				errs = appendErr(errs, boundConstraint(true, l.Type, k, l.Max[k], quantities{"request", pvc.Spec.Resources.Requests}, quantities{}))
			}
		}
	}
	if len(errs) > 0 {
		return apierrors.NewForbidden(corev1.Resource("persistentvolumeclaims"), pvc.Name, utilerrors.NewAggregate(errs))
	}
	return nil
}

// setContainerDefaults gives every (init) container the default limits
// and requests of lr's Container limits it does not set, and records them
// in the pod's limit-ranger annotation.
func setContainerDefaults(pod *corev1.Pod, lr *corev1.LimitRange) {
	var def corev1.ResourceRequirements
	for _, l := range lr.Spec.Limits {
		if l.Type != corev1.LimitTypeContainer {
			continue
		}
		def.Requests = mergeList(def.Requests, l.DefaultRequest)
		def.Limits = mergeList(def.Limits, l.Default)
	}
	var notes []string
	for i := range pod.Spec.Containers {
		notes = setDefaults(&pod.Spec.Containers[i], &def, "container", notes)
	}
	for i := range pod.Spec.InitContainers {
		notes = setDefaults(&pod.Spec.InitContainers[i], &def, "init container", notes)
	}
	if len(notes) > 0 {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[limitRangerAnnotation] = "LimitRanger plugin set: " + strings.Join(notes, "; ")
	}
}

// mergeList puts src's entries into dst (made if nil) and returns it.
func mergeList(dst, src corev1.ResourceList) corev1.ResourceList {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = corev1.ResourceList{}
	}
	for k, v := range src {
		dst[k] = v.DeepCopy()
	}
	return dst
}

// setDefaults fills c's missing limits and requests from def and appends
// kube's note of what it set ("cpu, memory request for container app").
func setDefaults(c *corev1.Container, def *corev1.ResourceRequirements, what string, notes []string) []string {
	fill := func(have *corev1.ResourceList, from corev1.ResourceList) []string {
		var set []string
		for k, v := range from {
			if _, ok := (*have)[k]; ok {
				continue
			}
			if *have == nil {
				*have = corev1.ResourceList{}
			}
			(*have)[k] = v.DeepCopy()
			set = append(set, string(k))
		}
		sort.Strings(set)
		return set
	}
	if req := fill(&c.Resources.Requests, def.Requests); len(req) > 0 {
		notes = append(notes, fmt.Sprintf("%s request for %s %s", strings.Join(req, ", "), what, c.Name))
	}
	if lim := fill(&c.Resources.Limits, def.Limits); len(lim) > 0 {
		notes = append(notes, fmt.Sprintf("%s limit for %s %s", strings.Join(lim, ", "), what, c.Name))
	}
	return notes
}

// podLimitErrors checks pod against lr: each (init) container against
// the Container limits, the pod's totals against the Pod limits.
func podLimitErrors(pod *corev1.Pod, lr *corev1.LimitRange) []error {
	var errs []error
	for _, l := range lr.Spec.Limits {
		switch l.Type {
		case corev1.LimitTypeContainer:
			for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
				for i := range cs {
					errs = append(errs, itemErrors(&l, cs[i].Resources.Requests, cs[i].Resources.Limits)...)
				}
			}
		case corev1.LimitTypePod:
			opts := resourcehelper.PodResourcesOptions{ExcludeOverhead: true}
			errs = append(errs, itemErrors(&l, resourcehelper.PodRequests(pod, opts), resourcehelper.PodLimits(pod, opts))...)
		}
	}
	return errs
}

// itemErrors checks requests and limits against one limit's min, max and
// maxLimitRequestRatio.
func itemErrors(l *corev1.LimitRangeItem, req, lim corev1.ResourceList) []error {
	var errs []error
	for _, k := range sortedNames(l.Min) {
		errs = appendErr(errs, boundConstraint(false, l.Type, k, l.Min[k], quantities{"request", req}, quantities{"limit", lim}))
	}
	for _, k := range sortedNames(l.Max) {
		errs = appendErr(errs, boundConstraint(true, l.Type, k, l.Max[k], quantities{"limit", lim}, quantities{"request", req}))
	}
	for _, k := range sortedNames(l.MaxLimitRequestRatio) {
		errs = appendErr(errs, ratioConstraint(l.Type, k, l.MaxLimitRequestRatio[k], req, lim))
	}
	return errs
}

func appendErr(errs []error, err error) []error {
	if err != nil {
		return append(errs, err)
	}
	return errs
}

// sortedNames returns l's resource names in order, so that messages are
// stable.
func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(l))
	for k := range l {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

// commonScale returns the three quantities at a common scale: milli-units
// unless one would overflow, then units (kube's precision rule).
func commonScale(a, b, c apiresource.Quantity) (int64, int64, int64) {
	x, y, z := a.Value(), b.Value(), c.Value()
	if x <= apiresource.MaxMilliValue && y <= apiresource.MaxMilliValue && z <= apiresource.MaxMilliValue {
		return a.MilliValue(), b.MilliValue(), c.MilliValue()
	}
	return x, y, z
}

// quantities is a container's (or claim's) requests or limits, with what
// the LimitRanger's messages call them.
type quantities struct {
	name string // "request" or "limit"
	list corev1.ResourceList
}

// boundConstraint is kube's minConstraint (isMax false) and maxConstraint
// (isMax true): k must be set in must (requests for a min, limits for a
// max) and there, as in other where set, not be below a min or above a
// max. A claim's max passes its requests as must and no other: its limits
// are not user input.
func boundConstraint(isMax bool, t corev1.LimitType, k corev1.ResourceName, bound apiresource.Quantity, must, other quantities) error {
	word := "minimum"
	if isMax {
		word = "maximum"
	}
	m, hasMust := must.list[k]
	o, hasOther := other.list[k]
	mv, ov, bv := commonScale(m, o, bound)
	beyond := func(v int64) bool { return v < bv }
	if isMax {
		beyond = func(v int64) bool { return v > bv }
	}
	switch {
	case !hasMust:
		return fmt.Errorf("%s %s usage per %s is %s.  No %s is specified", word, k, t, bound.String(), must.name)
	case beyond(mv):
		return fmt.Errorf("%s %s usage per %s is %s, but %s is %s", word, k, t, bound.String(), must.name, m.String())
	case hasOther && beyond(ov):
		return fmt.Errorf("%s %s usage per %s is %s, but %s is %s", word, k, t, bound.String(), other.name, o.String())
	}
	return nil
}

func ratioConstraint(t corev1.LimitType, k corev1.ResourceName, ratio apiresource.Quantity, req, lim corev1.ResourceList) error {
	r, hasReq := req[k]
	l, hasLim := lim[k]
	rv, lv, _ := commonScale(r, l, ratio)
	if !hasReq || rv == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no request is specified or request is 0", k, t, ratio.String())
	}
	if !hasLim || lv == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no limit is specified or limit is 0", k, t, ratio.String())
	}
	observed := float64(lv) / float64(rv)
	got, limit := observed, float64(ratio.Value())
	if ratio.Value() <= apiresource.MaxMilliValue {
		got, limit = observed*1000, float64(ratio.MilliValue())
	}
	if got > limit {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but provided ratio is %f", k, t, ratio.String(), observed)
	}
	return nil
}
