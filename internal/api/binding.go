package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
)

// pods/binding: the scheduler's POST of a v1 Binding assigns a pod to a
// node (spec.nodeName), merges the Binding's annotations and labels into
// the pod and sets its PodScheduled condition, as kube's BindingREST does.
// Like kube, the write bypasses the pod's update validation and
// managedFields. The answer is a 201 Success Status.

// bindingRow describes v1 Binding for decoding.
var bindingRow = &registry.Resource{Version: "v1", Resource: "bindings", Kind: "Binding",
	New: func() runtime.Object { return &corev1.Binding{} }}

var bindingGR = schema.GroupResource{Resource: "pods/binding"}

// bind serves POST /api/v1/namespaces/{ns}/pods/{name}/binding.
func (s *Server) bind(w http.ResponseWriter, r *http.Request, q *request) error {
	return serveWrite(s, w, r, parseCreateOptions, func(opts *writeOptions, ws *warnings) (*writeResult, error) {
		obj, err := s.decodePosted(r, q, bindingRow, opts, ws)
		if err != nil {
			return nil, err
		}
		b := obj.(*corev1.Binding)
		if errs := validateBinding(b); len(errs) > 0 {
			return nil, unknownErr(errs.ToAggregate()) // kube answers these with a bare 500
		}
		u := &mutation{q: q, opts: opts, ws: ws, uid: string(b.UID),
			desired: func(old runtime.Object, _ *kv.Object) (runtime.Object, error) {
				return bindPod(old, b, s.cfg.Now())
			}}
		if _, err := s.guaranteedUpdate(r.Context(), u); err != nil {
			return nil, err
		}
		return createdStatus()
	})
}

// createdStatus is the answer of a POST to a subresource that creates
// nothing to show (a binding, an eviction): a Success Status with 201.
func createdStatus() (*writeResult, error) {
	st := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess,
		Code: http.StatusCreated}
	raw, err := json.Marshal(&st)
	if err != nil {
		return nil, err
	}
	return &writeResult{raw: raw, code: http.StatusCreated}, nil
}

// validateBinding is kube's ValidatePodBinding.
func validateBinding(b *corev1.Binding) field.ErrorList {
	var errs field.ErrorList
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		errs = append(errs, field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node", "<empty>"}))
	}
	if b.Target.Name == "" {
		errs = append(errs, field.Required(field.NewPath("target", "name"), ""))
	}
	return errs
}

// bindPod assigns the pod old to the Binding's node.
func bindPod(old runtime.Object, b *corev1.Binding, now time.Time) (runtime.Object, error) {
	pod, ok := old.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("api: binding a %T", old)
	}
	conflict := func(format string, args ...any) error {
		return apierrors.NewConflict(bindingGR, pod.Name, fmt.Errorf(format, args...))
	}
	switch {
	case pod.DeletionTimestamp != nil:
		return nil, conflict("pod %s is being deleted, cannot be assigned to a host", pod.Name)
	case pod.Spec.NodeName != "":
		return nil, conflict("pod %v is already assigned to node %q", pod.Name, pod.Spec.NodeName)
	case len(pod.Spec.SchedulingGates) != 0:
		return nil, conflict("pod %v has non-empty .spec.schedulingGates", pod.Name)
	}
	pod.Spec.NodeName = b.Target.Name
	pod.Status.NominatedNodeName = ""
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	for k, v := range b.Annotations {
		pod.Annotations[k] = v
	}
	if len(b.Labels) > 0 && pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	for k, v := range b.Labels {
		pod.Labels[k] = v
	}
	updatePodCondition(&pod.Status, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, now)
	if b.ResourceVersion != "" {
		pod.ResourceVersion = b.ResourceVersion // a precondition
	}
	return pod, nil
}

// updatePodCondition sets condition c in status (kube's
// podutil.UpdatePodCondition): the transition time changes only with the
// status.
func updatePodCondition(status *corev1.PodStatus, c corev1.PodCondition, now time.Time) {
	c.LastTransitionTime = metav1.NewTime(now)
	for i := range status.Conditions {
		old := &status.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		*old = c
		return
	}
	status.Conditions = append(status.Conditions, c)
}

// decodePosted decodes the object POSTed to a pod subresource (a Binding,
// an Eviction) with the request's create options, and checks that it names
// the pod of the URL as kube does.
func (s *Server) decodePosted(r *http.Request, q *request, row *registry.Resource, opts *writeOptions, ws *warnings) (runtime.Object, error) {
	obj, err := s.decodeBody(r, row, opts.validation, ws)
	if err != nil {
		return nil, err
	}
	m, err := apimeta.Accessor(obj)
	if err != nil {
		return nil, badRequest("the object has no metadata: %v", err)
	}
	if m.GetName() != q.name {
		return nil, apierrors.NewBadRequest("name in URL does not match name in " + row.Kind + " object")
	}
	if m.GetNamespace() != "" && m.GetNamespace() != q.namespace {
		return nil, badRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return obj, nil
}
