package api

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"reflect"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/tidwall/gjson"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
)

// Admission: the one place where the leader decides what a write stores
// (names, uid, timestamps, generation, defaults, validation) before it is
// proposed. The FSM only stamps resourceVersion.

// admitCreate fills the system metadata of a new object of q.res (name
// from generateName, uid, creationTimestamp, generation), applies the
// kind's defaults and create-time mutations (Normalize, Prepare) and
// validates it.
func (s *Server) admitCreate(ctx context.Context, q *request, obj runtime.Object) (metav1.Object, error) {
	m, err := apimeta.Accessor(obj)
	if err != nil {
		return nil, badRequest("the object has no metadata: %v", err)
	}
	if err := checkNamespace(q, m); err != nil {
		return nil, err
	}
	if m.GetName() == "" && m.GetGenerateName() != "" {
		m.SetName(generateName(m.GetGenerateName()))
	}
	m.SetUID(types.UID(uuid.NewString()))
	m.SetCreationTimestamp(metav1.NewTime(s.cfg.Now().UTC().Truncate(time.Second)))
	m.SetResourceVersion("")
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	m.SetGeneration(0)
	if q.res.HasGeneration {
		m.SetGeneration(1)
	}
	s.normalize(q.res, obj) // idempotent; callers that track managedFields ran it first
	if q.res.Prepare != nil {
		q.res.Prepare(obj)
	}
	return m, validateCreate(ctx, q.res, obj)
}

// admitUpdate carries the server-owned metadata of old over to obj (uid
// when obj has none, creationTimestamp, deletion fields, generation), keeps
// the stored status on the main resource of kinds with a status
// subresource, checks the resourceVersion precondition, bumps generation
// when anything but metadata and status changed, validates, and returns
// the bytes to store.
func (s *Server) admitUpdate(ctx context.Context, q *request, obj, old runtime.Object, cur *kv.Object) ([]byte, error) {
	m, err := apimeta.Accessor(obj)
	if err != nil {
		return nil, badRequest("the object has no metadata: %v", err)
	}
	om, err := apimeta.Accessor(old)
	if err != nil {
		return nil, err
	}
	if err := checkNamespace(q, m); err != nil {
		return nil, err
	}
	if m.GetName() != q.name {
		return nil, badRequest("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), q.name)
	}
	switch rv := m.GetResourceVersion(); {
	case rv == "":
		m.SetResourceVersion(formatRV(cur.RV))
	case rv != formatRV(cur.RV):
		return nil, storeErr(kv.ErrConflict, q.res, q.name)
	}
	m.SetGeneration(om.GetGeneration())
	if m.GetUID() == "" {
		m.SetUID(om.GetUID())
	}
	m.SetCreationTimestamp(om.GetCreationTimestamp())
	if om.GetDeletionTimestamp() != nil {
		m.SetDeletionTimestamp(om.GetDeletionTimestamp())
	}
	if om.GetDeletionGracePeriodSeconds() != nil && m.GetDeletionGracePeriodSeconds() == nil {
		m.SetDeletionGracePeriodSeconds(om.GetDeletionGracePeriodSeconds())
	}
	if q.subresource == "" && q.res.Status {
		copyStatus(obj, old)
	}
	if ns, ok := obj.(*corev1.Namespace); ok && q.subresource != "finalize" {
		// spec.finalizers change through /finalize only (kube's namespace strategy)
		ns.Spec.Finalizers = old.(*corev1.Namespace).Spec.Finalizers
	}
	admitPodUpdate(q, obj, old)
	if q.subresource == "" && q.res.PrepareUpdate != nil {
		q.res.PrepareUpdate(obj, old)
	}
	if q.subresource != "binding" { // a binding bypasses the pod's update validation, as in kube
		if err := validateUpdate(ctx, q.res, obj, old); err != nil {
			return nil, err
		}
	}
	if err := validatePodSubresource(q.subresource, obj, old); err != nil {
		return nil, err
	}
	raw, err := encode(obj)
	if err != nil {
		return nil, err
	}
	if q.res.HasGeneration && q.subresource != "binding" && generationChanged(q.res, raw, cur.Raw) {
		m.SetGeneration(om.GetGeneration() + 1)
		return encode(obj)
	}
	if !bytes.Equal(raw, cur.Raw) && sameManagedFieldsButTimes(m, om) {
		// Only managedFields times would change: kube keeps the old ones
		// when nothing else changed, so that the write is a no-op.
		mf := m.GetManagedFields()
		m.SetManagedFields(om.GetManagedFields())
		if again, err := encode(obj); err == nil && bytes.Equal(again, cur.Raw) {
			return again, nil
		}
		m.SetManagedFields(mf)
	}
	return raw, nil
}

// sameManagedFieldsButTimes reports whether the entries of m and om differ
// in their times only (and some time differs).
func sameManagedFieldsButTimes(m, om metav1.Object) bool {
	a, b := m.GetManagedFields(), om.GetManagedFields()
	if len(a) == 0 || len(a) != len(b) {
		return false
	}
	return apiequality.Semantic.DeepEqual(managedFieldsWithoutTimes(a), managedFieldsWithoutTimes(b))
}

func checkNamespace(q *request, m metav1.Object) error {
	if !q.res.Namespaced {
		m.SetNamespace("")
		return nil
	}
	switch ns := m.GetNamespace(); {
	case ns == "":
		m.SetNamespace(q.namespace)
	case ns != q.namespace:
		return badRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// copyStatus sets dst's status to src's: a main-resource update keeps the
// stored status, as kube does for kinds with a status subresource. Custom
// resources (unstructured) copy the "status" key.
func copyStatus(dst, src runtime.Object) {
	if du, ok := dst.(*unstructured.Unstructured); ok {
		var st any
		if su, ok := src.(*unstructured.Unstructured); ok {
			st = su.Object["status"]
		}
		if st != nil {
			du.Object["status"] = runtime.DeepCopyJSONValue(st)
		} else {
			delete(du.Object, "status")
		}
		return
	}
	d := reflect.ValueOf(dst).Elem().FieldByName("Status")
	sv := reflect.ValueOf(src).Elem().FieldByName("Status")
	if d.IsValid() && sv.IsValid() && d.CanSet() && d.Type() == sv.Type() {
		d.Set(sv)
	}
}

// generationChanged compares what bumps metadata.generation in the new
// encoding and the stored one: every top-level field but kind, apiVersion,
// metadata and status (status counts for custom resources without a
// status subresource, as in kube).
func generationChanged(res *registry.Resource, raw, stored []byte) bool {
	skipStatus := res.Status || !res.Custom
	part := func(b []byte) string {
		var out []byte
		gjson.ParseBytes(b).ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "kind", "apiVersion", "metadata":
				return true
			case "status":
				if skipStatus {
					return true
				}
			}
			out = append(out, k.Raw...)
			out = append(out, ':')
			out = append(out, v.Raw...)
			out = append(out, ',')
			return true
		})
		return string(out)
	}
	return part(raw) != part(stored)
}

// encode renders obj as the bytes to store: compact JSON in Go struct
// order, kind and apiVersion first.
func encode(obj runtime.Object) ([]byte, error) {
	return json.Marshal(obj)
}

const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// generateName appends kube's 5 random characters to base, cut so that
// the name stays within 63 characters (kube's SimpleNameGenerator).
func generateName(base string) string {
	const maxBase = 63 - 5
	if len(base) > maxBase {
		base = base[:maxBase]
	}
	return base + randSuffix()
}

// randSuffix returns the 5 random characters kube appends to generateName.
func randSuffix() string {
	var b [5]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = suffixAlphabet[int(b[i])%len(suffixAlphabet)]
	}
	return string(b[:])
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func typesUID(s string) types.UID { return types.UID(s) }
