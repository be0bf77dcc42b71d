package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
)

// The scale subresource speaks autoscaling/v1 Scale, built from the paths
// of the resource's scaleSpec: spec.replicas, status.replicas and the
// label selector (a LabelSelector object, rendered as a selector string,
// or a string already). Updates change the replicas of the object and
// nothing else; managedFields move between the object and the Scale with
// apimachinery's ScaleHandler, as in kube.

// scaleRow describes autoscaling/v1 Scale for decoding and patching.
var scaleRow = &registry.Resource{Group: "autoscaling", Version: "v1", Resource: "scale", Kind: "Scale",
	New: func() runtime.Object { return &autoscalingv1.Scale{} }}

// scaleCodecs decodes Scale bodies.
func (s *Server) scaleCodecs() *codecs {
	if _, err := s.scaleFieldManager(); err != nil {
		panic(err) // a static registration of autoscaling/v1
	}
	f := &s.writes.fm
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.scaleCodecs
}

// gjsonPath turns ".spec.replicas" into gjson's "spec.replicas".
func gjsonPath(p string) string { return strings.TrimPrefix(p, ".") }

// scaleOf builds the Scale of a stored object of res.
func scaleOf(res *registry.Resource, raw []byte) (*autoscalingv1.Scale, error) {
	meta := gjson.GetBytes(raw, "metadata")
	sc := &autoscalingv1.Scale{TypeMeta: metav1.TypeMeta{Kind: "Scale", APIVersion: "autoscaling/v1"},
		ObjectMeta: metav1.ObjectMeta{Name: meta.Get("name").Str, Namespace: meta.Get("namespace").Str,
			UID: types.UID(meta.Get("uid").Str), ResourceVersion: meta.Get("resourceVersion").Str}}
	if ts := meta.Get("creationTimestamp"); ts.Exists() {
		if err := sc.CreationTimestamp.UnmarshalJSON([]byte(ts.Raw)); err != nil {
			return nil, err
		}
	}
	sp := res.Scale
	sc.Spec.Replicas = int32(gjson.GetBytes(raw, gjsonPath(sp.SpecReplicas)).Int())
	if sp.StatusReplicas != "" {
		sc.Status.Replicas = int32(gjson.GetBytes(raw, gjsonPath(sp.StatusReplicas)).Int())
	}
	if sp.LabelSelector != "" {
		switch v := gjson.GetBytes(raw, gjsonPath(sp.LabelSelector)); {
		case v.Type == gjson.String:
			sc.Status.Selector = v.Str
		case v.IsObject() && sp.SelectorIsMap:
			var set map[string]string
			if err := json.Unmarshal([]byte(v.Raw), &set); err != nil {
				return nil, apierrors.NewBadRequest(err.Error())
			}
			sc.Status.Selector = labels.SelectorFromSet(set).String()
		case v.IsObject():
			var ls metav1.LabelSelector
			if err := json.Unmarshal([]byte(v.Raw), &ls); err != nil {
				return nil, apierrors.NewBadRequest(err.Error())
			}
			sel, err := metav1.LabelSelectorAsSelector(&ls)
			if err != nil {
				return nil, apierrors.NewBadRequest(err.Error())
			}
			sc.Status.Selector = sel.String()
		}
	}
	return sc, nil
}

// getScale serves GET …/scale.
func (s *Server) getScale(w http.ResponseWriter, r *http.Request, q *request) error {
	obj, _, err := s.store.Get(r.Context(), q.key(), r.URL.Query().Get("resourceVersion") == "")
	if err != nil {
		return storeErr(err, q.res, q.name)
	}
	b, err := scaleJSON(q.res, obj.Raw)
	if err != nil {
		return err
	}
	writeRaw(w, http.StatusOK, b)
	return nil
}

// scaleJSON is the Scale of a stored object of res, as JSON.
func scaleJSON(res *registry.Resource, raw []byte) ([]byte, error) {
	sc, err := scaleOf(res, raw)
	if err != nil {
		return nil, err
	}
	return json.Marshal(sc)
}

// updateScale serves PUT …/scale.
func (s *Server) updateScale(w http.ResponseWriter, r *http.Request, q *request) error {
	return serveWrite(s, w, r, parseUpdateOptions, func(opts *writeOptions, ws *warnings) (*writeResult, error) {
		dec, err := s.scaleCodecs().decoderFor(r)
		if err != nil {
			return nil, err
		}
		body, err := readBody(r)
		if err != nil {
			return nil, err
		}
		obj, err := s.decodeWith(scaleRow, dec, body, opts.validation, ws)
		if err != nil {
			return nil, err
		}
		req := obj.(*autoscalingv1.Scale)
		if req.Name != q.name {
			return nil, badRequest("the name of the object (%s) does not match the name on the URL (%s)", req.Name, q.name)
		}
		return s.scale(r.Context(), q, opts, ws, func(old *autoscalingv1.Scale, fm *managedfields.FieldManager) (runtime.Object, error) {
			return fm.UpdateNoErrors(old, req.DeepCopy(), opts.manager), nil
		})
	})
}

// patchScale serves PATCH …/scale (any patch type, apply included).
func (s *Server) patchScale(ctx context.Context, q *request, pt types.PatchType, body []byte, opts *writeOptions, ws *warnings) (*writeResult, error) {
	var ap *unstructured.Unstructured
	if pt == types.ApplyYAMLPatchType {
		var err error
		if ap, err = decodeApplyPatch(body); err != nil {
			return nil, err
		}
	}
	return s.scale(ctx, q, opts, ws, func(old *autoscalingv1.Scale, fm *managedfields.FieldManager) (runtime.Object, error) {
		if ap != nil {
			obj, err := fm.Apply(old, ap.DeepCopy(), opts.explicitManager, opts.force)
			if err != nil {
				return nil, applyErr(err)
			}
			return obj, strictApplyPatch(body, opts.validation, ws)
		}
		cur, err := json.Marshal(old)
		if err != nil {
			return nil, err
		}
		obj, err := s.patchedObject(scaleRow, pt, cur, old, body, opts.validation, ws)
		if err != nil {
			return nil, err
		}
		return fm.UpdateNoErrors(old, obj, opts.manager), nil
	})
}

// scale runs a Scale update: newScale computes the requested Scale from
// the current one (with the managedFields of the Scale's view). The
// result is the stored object's Scale.
func (s *Server) scale(ctx context.Context, q *request, opts *writeOptions, ws *warnings,
	newScale func(old *autoscalingv1.Scale, fm *managedfields.FieldManager) (runtime.Object, error)) (*writeResult, error) {
	fm, err := s.scaleFieldManager()
	if err != nil {
		return nil, err
	}
	res := q.res
	gv := res.GroupVersion()
	mappings := managedfields.ResourcePathMappings{gv: replicasPath(res.Scale.SpecReplicas)}
	u := &mutation{q: q, opts: opts, ws: ws, desired: func(old runtime.Object, cur *kv.Object) (runtime.Object, error) {
		om, err := apimeta.Accessor(old)
		if err != nil {
			return nil, err
		}
		handler := managedfields.NewScaleHandler(om.GetManagedFields(), schema.GroupVersion{Group: res.Group, Version: res.Version}, mappings)
		oldScale, err := scaleOf(res, cur.Raw)
		if err != nil {
			return nil, err
		}
		if oldScale.ManagedFields, err = handler.ToSubresource(); err != nil {
			return nil, err
		}
		obj, err := newScale(oldScale, fm)
		if err != nil {
			return nil, err
		}
		sc, ok := obj.(*autoscalingv1.Scale)
		if !ok {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("expected input object type to be Scale, but %T", obj))
		}
		if sc.Spec.Replicas < 0 {
			return nil, apierrors.NewInvalid(schema.GroupKind{Group: "autoscaling", Kind: "Scale"}, sc.Name, field.ErrorList{
				field.Invalid(field.NewPath("spec", "replicas"), sc.Spec.Replicas, "must be greater than or equal to 0")})
		}
		if sc.UID != "" && string(sc.UID) != cur.UID {
			return nil, apierrors.NewConflict(schema.GroupResource{Group: res.Group, Resource: res.Resource + "/scale"}, q.name,
				fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", sc.UID, cur.UID))
		}
		out, err := withReplicas(res, old, sc.Spec.Replicas)
		if err != nil {
			return nil, err
		}
		m, err := apimeta.Accessor(out)
		if err != nil {
			return nil, err
		}
		m.SetResourceVersion(sc.ResourceVersion)
		entries, err := handler.ToParent(sc.ManagedFields)
		if err != nil {
			return nil, err
		}
		m.SetManagedFields(entries)
		return out, nil
	}}
	wr, err := s.guaranteedUpdate(ctx, u)
	if err != nil {
		return nil, err
	}
	b, err := scaleJSON(res, wr.raw)
	if err != nil {
		return nil, err
	}
	return &writeResult{raw: b, code: wr.code}, nil
}

// withReplicas returns a copy of obj with replicas at the scale's spec
// replicas path.
func withReplicas(res *registry.Resource, obj runtime.Object, replicas int32) (runtime.Object, error) {
	path := strings.Split(gjsonPath(res.Scale.SpecReplicas), ".")
	if u, ok := obj.(*unstructured.Unstructured); ok {
		out := u.DeepCopy()
		if err := unstructured.SetNestedField(out.Object, int64(replicas), path...); err != nil {
			return nil, err
		}
		return out, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	if err := unstructured.SetNestedField(m, int64(replicas), path...); err != nil {
		return nil, err
	}
	out := res.New()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, out); err != nil {
		return nil, err
	}
	out.GetObjectKind().SetGroupVersionKind(res.GVK())
	return out, nil
}
