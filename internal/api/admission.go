package api

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/tidwall/gjson"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/litek8s/litek8s/internal/kv"
)

// Admission: the one place where the leader decides what a write stores
// (names, uid, timestamps, generation, defaults, validation) before it is
// proposed. The FSM only stamps resourceVersion.

// admitCreate fills the metadata of a new object of q.res and validates it.
func (s *Server) admitCreate(q *request, obj runtime.Object) (metav1.Object, error) {
	m, err := apimeta.Accessor(obj)
	if err != nil {
		return nil, badRequest("the object has no metadata: %v", err)
	}
	if err := checkNamespace(q, m); err != nil {
		return nil, err
	}
	if m.GetName() == "" && m.GetGenerateName() != "" {
		m.SetName(m.GetGenerateName() + randSuffix())
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
	if q.res.Prepare != nil {
		q.res.Prepare(obj)
	}
	if q.res.Normalize != nil {
		q.res.Normalize(obj)
	}
	return m, validateMeta(q.res, m)
}

// admitUpdate carries the server-owned metadata of cur over to obj, keeps
// cur's status (served through /status), bumps generation on spec changes
// and validates.
func (s *Server) admitUpdate(q *request, obj runtime.Object, cur *kv.Object) (metav1.Object, error) {
	m, err := apimeta.Accessor(obj)
	if err != nil {
		return nil, badRequest("the object has no metadata: %v", err)
	}
	if err := checkNamespace(q, m); err != nil {
		return nil, err
	}
	if m.GetName() != q.name {
		return nil, badRequest("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), q.name)
	}
	old := q.res.New()
	if err := json.Unmarshal(cur.Raw, old); err != nil {
		return nil, fmt.Errorf("api: decode stored %s: %w", cur.Key, err)
	}
	om, _ := apimeta.Accessor(old)
	if uid := m.GetUID(); uid != "" && uid != om.GetUID() {
		return nil, apierrors.NewConflict(q.res.groupResource(), q.name,
			fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", uid, om.GetUID()))
	}
	m.SetUID(om.GetUID())
	m.SetCreationTimestamp(om.GetCreationTimestamp())
	m.SetDeletionTimestamp(om.GetDeletionTimestamp())
	m.SetDeletionGracePeriodSeconds(om.GetDeletionGracePeriodSeconds())
	m.SetGeneration(om.GetGeneration())
	copyStatus(obj, old)
	if q.res.Normalize != nil {
		q.res.Normalize(obj)
	}
	if q.res.HasGeneration && specChanged(obj, cur.Raw) {
		m.SetGeneration(om.GetGeneration() + 1)
	}
	return m, validateMeta(q.res, m)
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

// copyStatus keeps the stored status on a main-resource update, as kube
// does for kinds with a status subresource.
func copyStatus(dst, src runtime.Object) {
	d := reflect.ValueOf(dst).Elem().FieldByName("Status")
	sv := reflect.ValueOf(src).Elem().FieldByName("Status")
	if d.IsValid() && sv.IsValid() && d.CanSet() && d.Kind() == reflect.Struct {
		d.Set(sv)
	}
}

// specChanged compares obj's spec with the stored object's.
func specChanged(obj runtime.Object, stored []byte) bool {
	sv := reflect.ValueOf(obj).Elem().FieldByName("Spec")
	if !sv.IsValid() {
		return false
	}
	b, err := json.Marshal(sv.Interface())
	if err != nil {
		return true
	}
	return string(b) != gjson.GetBytes(stored, "spec").Raw
}

func validateMeta(res *resource, m metav1.Object) error {
	nameFn := validation.NameIsDNSSubdomain
	if res.Resource == "namespaces" {
		nameFn = validation.ValidateNamespaceName
	}
	// m is the typed object (say *corev1.ConfigMap); validation wants its
	// embedded ObjectMeta.
	a, ok := m.(metav1.ObjectMetaAccessor)
	if !ok {
		return nil
	}
	om, ok := a.GetObjectMeta().(*metav1.ObjectMeta)
	if !ok {
		return nil
	}
	errs := validation.ValidateObjectMeta(om, res.Namespaced, nameFn, field.NewPath("metadata"))
	if len(errs) > 0 {
		return apierrors.NewInvalid(res.gvk().GroupKind(), m.GetName(), errs)
	}
	return nil
}

// encode renders obj as the bytes to store: compact JSON in Go struct
// order, kind and apiVersion first.
func encode(obj runtime.Object) ([]byte, error) {
	return json.Marshal(obj)
}

const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

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
