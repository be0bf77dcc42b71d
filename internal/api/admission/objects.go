package admission

import (
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kadmission "k8s.io/apiserver/pkg/admission"
)

// NewObjectInterfaces returns kube's ObjectInterfaces over the API's
// scheme for objects as litek8s holds them: built-in kinds in their
// served (external) version, custom resources as Unstructured. A plugin
// that changed an object (a webhook's patch) copies it back with Convert,
// which between two objects of the same type is a plain copy; kinds the
// scheme does not know (custom resources) are created as Unstructured.
func NewObjectInterfaces(s *runtime.Scheme) kadmission.ObjectInterfaces {
	return &kadmission.RuntimeObjectInterfaces{ObjectCreater: creater{s}, ObjectTyper: s, ObjectDefaulter: s,
		ObjectConvertor: convertor{s}, EquivalentResourceMapper: runtime.NewEquivalentResourceRegistry()}
}

type creater struct{ s *runtime.Scheme }

func (c creater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	if c.s.Recognizes(gvk) {
		return c.s.New(gvk)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

type convertor struct{ *runtime.Scheme }

func (c convertor) Convert(in, out, ctx any) error {
	_, uin := in.(runtime.Unstructured)
	if !uin && reflect.TypeOf(in) == reflect.TypeOf(out) && reflect.TypeOf(in).Kind() == reflect.Pointer {
		reflect.ValueOf(out).Elem().Set(reflect.ValueOf(in).Elem())
		return nil
	}
	return c.Scheme.Convert(in, out, ctx)
}
