package api

import (
	"fmt"
	"runtime/debug"
	"strings"
	"sync"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/litek8s/litek8s/internal/api/registry"
)

// metadata.managedFields: every create, update, patch and apply goes
// through apimachinery's managedfields.FieldManager, the same code
// kube-apiserver runs (structured-merge-diff underneath), so the entries,
// their order, the apply merge and its conflicts are kube's. Built-in kinds
// use the typed schema shipped with client-go's applyconfigurations (kube's
// own OpenAPI); custom resources, and kinds that schema does not know, use
// a schema deduced from the object (every list atomic).

// writeState is the write path's own state in a Server.
type writeState struct {
	fm fieldManagers
}

// fieldManagers builds and caches one FieldManager per registry row and
// subresource. Rows are immutable and a registry rebuild makes new rows,
// so a row pointer is a valid key.
type fieldManagers struct {
	mu sync.Mutex // protects byRow and typed
	// byRow caches the managers built so far.
	byRow map[fmKey]*managedfields.FieldManager
	typed managedfields.TypeConverter // of the Server's scheme, built on first use
	// scale serves the autoscaling/v1 Scale of the scale subresource.
	scaleCodecs *codecs
	scale       *managedfields.FieldManager
}

type fmKey struct {
	res *registry.Resource
	sub string
}

// fieldManager returns the FieldManager of res (sub "" for the resource
// itself, "status" for its status subresource).
func (s *Server) fieldManager(res *registry.Resource, sub string) (*managedfields.FieldManager, error) {
	f := &s.writes.fm
	f.mu.Lock()
	defer f.mu.Unlock()
	k := fmKey{res, sub}
	if m := f.byRow[k]; m != nil {
		return m, nil
	}
	if f.byRow == nil {
		f.byRow = make(map[fmKey]*managedfields.FieldManager)
	}
	if f.typed == nil {
		f.typed = applyconfigurations.NewTypeConverter(s.scheme)
		// Parsing client-go's schema of every kind (a YAML document of
		// several MB) leaves ~10 MB of garbage behind once, at the first
		// write: give it back to the OS now rather than keep it mapped.
		debug.FreeOSMemory()
	}
	conv := &rowConvertor{gvk: res.GVK(), newObj: res.New, normalize: res.Normalize}
	gv := res.GVK().GroupVersion()
	reset := resetFields(res, sub)
	var m *managedfields.FieldManager
	var err error
	if tc := f.typed; res.GoType() != nil && knowsType(tc, res) {
		m, err = managedfields.NewDefaultFieldManager(tc, conv, conv, conv, res.GVK(), gv, sub, reset)
	} else {
		m, err = managedfields.NewDefaultCRDFieldManager(managedfields.NewDeducedTypeConverter(), conv, conv, conv,
			res.GVK(), gv, sub, reset)
	}
	if err != nil {
		return nil, fmt.Errorf("api: field manager of %s: %w", res.StoreKey(), err)
	}
	f.byRow[k] = m
	return m, nil
}

// knowsType reports whether the typed schema describes res's kind.
func knowsType(tc managedfields.TypeConverter, res *registry.Resource) bool {
	obj := res.New()
	obj.GetObjectKind().SetGroupVersionKind(res.GVK())
	_, err := tc.ObjectToTyped(obj)
	return err == nil
}

// scaleFieldManager returns the FieldManager of autoscaling/v1 Scale.
func (s *Server) scaleFieldManager() (*managedfields.FieldManager, error) {
	f := &s.writes.fm
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.scale != nil {
		return f.scale, nil
	}
	sch := runtime.NewScheme()
	if err := autoscalingv1.AddToScheme(sch); err != nil {
		return nil, err
	}
	gvk := autoscalingv1.SchemeGroupVersion.WithKind("Scale")
	conv := &rowConvertor{gvk: gvk, newObj: func() runtime.Object { return &autoscalingv1.Scale{} }}
	// Scale is not in client-go's apply schema; its fields are scalars, so
	// a deduced schema merges it the same way.
	m, err := managedfields.NewDefaultFieldManager(managedfields.NewDeducedTypeConverter(), conv, conv, conv,
		gvk, gvk.GroupVersion(), "scale", nil)
	if err != nil {
		return nil, fmt.Errorf("api: field manager of Scale: %w", err)
	}
	f.scaleCodecs, f.scale = newCodecs(sch), m
	return m, nil
}

// resetFields are the fields a request may send but does not own because
// the server resets them: status on the main resource of kinds with a
// status subresource, spec on the status subresource (kube's strategies'
// GetResetFields).
func resetFields(res *registry.Resource, sub string) map[fieldpath.APIVersion]fieldpath.Filter {
	var set *fieldpath.Set
	switch {
	case statusLike(sub):
		set = fieldpath.NewSet(fieldpath.MakePathOrDie("spec"))
	case sub == "" && res.Status:
		set = fieldpath.NewSet(fieldpath.MakePathOrDie("status"))
	default:
		return nil
	}
	return map[fieldpath.APIVersion]fieldpath.Filter{
		fieldpath.APIVersion(res.GroupVersion()): fieldpath.NewExcludeSetFilter(set),
	}
}

// trackUpdate records a create, update or non-apply patch by manager in
// obj's managedFields (live is the stored object, or an empty one for a
// create). Like kube, a failure keeps the live object's entries.
func (s *Server) trackUpdate(res *registry.Resource, sub string, live, obj runtime.Object, manager string) (runtime.Object, error) {
	fm, err := s.fieldManager(res, sub)
	if err != nil {
		return nil, err
	}
	return fm.UpdateNoErrors(live, obj, manager), nil
}

// emptyObject is what a create's managedFields are computed against.
func emptyObject(res *registry.Resource) runtime.Object {
	obj := res.New()
	obj.GetObjectKind().SetGroupVersionKind(res.GVK())
	return obj
}

// rowConvertor is the runtime.ObjectConvertor, ObjectCreater and
// ObjectDefaulter the FieldManager of one kind needs. litek8s serves one
// version of each built-in kind and stores it as served, so the "hub"
// version is the served one and conversion only turns the FieldManager's
// unstructured results back into the kind's Go type. Custom resources stay
// unstructured; their versions differ in apiVersion only (conversion None).
type rowConvertor struct {
	gvk       schema.GroupVersionKind
	newObj    func() runtime.Object
	normalize func(runtime.Object)
}

func (c *rowConvertor) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	gvk := c.gvk
	if gv, ok := target.(schema.GroupVersion); ok && gv.Group == c.gvk.Group {
		gvk = gv.WithKind(c.gvk.Kind)
	}
	u, isU := in.(*unstructured.Unstructured)
	out := c.newObj()
	switch _, outU := out.(*unstructured.Unstructured); {
	case isU && !outU:
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
			return nil, err
		}
		gvk = c.gvk // one version of a built-in kind
	case isU:
		out = u.DeepCopy()
	case !outU:
		out = in.DeepCopyObject()
		gvk = c.gvk
	default:
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(in)
		if err != nil {
			return nil, err
		}
		out = &unstructured.Unstructured{Object: m}
	}
	out.GetObjectKind().SetGroupVersionKind(gvk)
	return out, nil
}

func (c *rowConvertor) Convert(in, out, context any) error {
	return fmt.Errorf("api: conversion of %T is not supported", in)
}

func (c *rowConvertor) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return "", "", fmt.Errorf("api: field label conversion is not supported")
}

func (c *rowConvertor) New(kind schema.GroupVersionKind) (runtime.Object, error) {
	if kind.GroupKind() != c.gvk.GroupKind() {
		return nil, fmt.Errorf("api: cannot create a %v", kind)
	}
	obj := c.newObj()
	obj.GetObjectKind().SetGroupVersionKind(kind)
	return obj, nil
}

// Default applies the defaults every write gets (an apply's merge result
// is defaulted like a decoded body).
func (c *rowConvertor) Default(obj runtime.Object) {
	if c.normalize != nil {
		c.normalize(obj)
	}
}

// replicasPath turns a scale JSON path (".spec.replicas") into a fieldpath.
func replicasPath(jsonPath string) fieldpath.Path {
	var p fieldpath.Path
	for _, f := range strings.Split(strings.TrimPrefix(jsonPath, "."), ".") {
		name := f
		p = append(p, fieldpath.PathElement{FieldName: &name})
	}
	return p
}

// managedFieldsWithoutTimes returns a copy of entries without their times
// (for the no-op check: kube ignores a change of managedFields times alone).
func managedFieldsWithoutTimes(entries []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	out := make([]metav1.ManagedFieldsEntry, len(entries))
	for i, e := range entries {
		e.Time = nil
		out[i] = e
	}
	return out
}
