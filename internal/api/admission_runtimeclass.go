package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/litek8s/litek8s/internal/kv"
)

const runtimeClassesKey = "runtimeclasses.node.k8s.io"

// admitRuntimeClass is kube's RuntimeClass admission of a new pod: the
// class it names must exist; the pod gets the class's overhead (a pod
// overhead that differs from it, or one without a class that defines it,
// is refused) and its scheduling (nodeSelector merged, a conflicting
// value refused; tolerations added).
func (s *Server) admitRuntimeClass(ctx context.Context, pod *corev1.Pod) error {
	var rc *nodev1.RuntimeClass
	if name := pod.Spec.RuntimeClassName; name != nil && *name != "" {
		o, _, err := s.store.Get(ctx, kv.Key{Resource: runtimeClassesKey, Name: *name}, false)
		if errors.Is(err, kv.ErrNotFound) {
			return podForbidden(pod, fmt.Errorf("pod rejected: RuntimeClass %q not found", *name))
		}
		if err != nil {
			return err
		}
		rc = &nodev1.RuntimeClass{}
		if err := json.Unmarshal(o.Raw, rc); err != nil {
			return err
		}
	}
	switch {
	case rc != nil && rc.Overhead != nil:
		if len(pod.Spec.Overhead) > 0 && !apiequality.Semantic.DeepEqual(rc.Overhead.PodFixed, pod.Spec.Overhead) {
			return podForbidden(pod, errors.New("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"))
		}
		pod.Spec.Overhead = rc.Overhead.PodFixed
	case pod.Spec.Overhead != nil:
		return podForbidden(pod, errors.New("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"))
	}
	if rc == nil || rc.Scheduling == nil {
		return nil
	}
	for k, v := range rc.Scheduling.NodeSelector {
		if pv, ok := pod.Spec.NodeSelector[k]; ok && pv != v {
			return podForbidden(pod, fmt.Errorf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", k, v, k, pv))
		}
		if pod.Spec.NodeSelector == nil {
			pod.Spec.NodeSelector = map[string]string{}
		}
		pod.Spec.NodeSelector[k] = v
	}
	for _, t := range rc.Scheduling.Tolerations {
		if !hasToleration(pod.Spec.Tolerations, t) {
			pod.Spec.Tolerations = append(pod.Spec.Tolerations, t)
		}
	}
	return nil
}

// hasToleration reports whether ts holds t.
func hasToleration(ts []corev1.Toleration, t corev1.Toleration) bool {
	for i := range ts {
		if apiequality.Semantic.DeepEqual(ts[i], t) {
			return true
		}
	}
	return false
}
