package api

import (
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/litek8s/litek8s/internal/api/table"
)

// resource is one row of the registry: everything the generic handlers need
// to serve a kind.
type resource struct {
	Group, Version, Resource, Singular, Kind string
	Namespaced                               bool
	ShortNames, Categories                   []string
	// New returns an empty typed object and its list.
	New, NewList func() runtime.Object
	// Prepare applies the kind's server-side defaults on create, after the
	// generic metadata (uid, timestamps) is set. Optional.
	Prepare func(obj runtime.Object)
	// HasGeneration: metadata.generation starts at 1 and is bumped when
	// spec changes.
	HasGeneration bool
	// Verbs served on the resource; nil means servedVerbs.
	Verbs []string
	// Status: the resource has a status subresource (a PUT or PATCH of the
	// main resource keeps the stored status; /status changes only status).
	Status bool
	// Scale, when set, serves the scale subresource (autoscaling/v1 Scale).
	Scale *scaleSpec
	// Binding: pods/binding (POST sets spec.nodeName).
	Binding bool
	// Validate checks kind-specific rules (immutable fields, …) on create
	// (old nil) and update. Optional.
	Validate func(obj, old runtime.Object) field.ErrorList
	// Normalize runs on every write (create, update, patch, apply result)
	// right after decoding and before managedFields are computed: kube's
	// scheme defaults (SetDefaults_*) for built-in kinds, pruning and schema
	// defaults for custom resources. Fields it sets belong to the writer in
	// managedFields, as in kube; create-only mutations that kube does not
	// attribute to the writer (allocations, status) belong in Prepare.
	// Must be idempotent. Optional.
	Normalize func(obj runtime.Object)
	// Custom marks a custom resource (served from a CRD); Schema is its
	// OpenAPI schema and ListKind its list kind.
	Custom   bool
	Schema   *spec.Schema
	ListKind string
	// Printer, when set, replaces table.Lookup for Tables (custom
	// resources: the CRD's printer columns, evaluated at request time).
	Printer *table.Printer
}

// scaleSpec says where a resource keeps what its Scale shows, as JSON
// paths like a CRD's scale subresource (".spec.replicas").
type scaleSpec struct {
	SpecReplicas, StatusReplicas, LabelSelector string
}

// defaultScale is the scale of deployments, replicasets and statefulsets.
var defaultScale = &scaleSpec{SpecReplicas: ".spec.replicas", StatusReplicas: ".status.replicas",
	LabelSelector: ".spec.selector"}

// verbs returns the verbs served on r.
func (r *resource) verbs() []string {
	if r.Verbs != nil {
		return r.Verbs
	}
	return servedVerbs
}

// storeKey is the group-qualified plural used as the store's resource name.
func (r *resource) storeKey() string {
	if r.Group == "" {
		return r.Resource
	}
	return r.Resource + "." + r.Group
}

// GroupVersion returns the group/version string ("v1", "apps/v1").
func (r *resource) groupVersion() string {
	return schema.GroupVersion{Group: r.Group, Version: r.Version}.String()
}

func (r *resource) gvk() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

func (r *resource) groupResource() schema.GroupResource {
	return schema.GroupResource{Group: r.Group, Resource: r.Resource}
}

// goType is the Go type of a built-in kind (nil for a custom resource).
func (r *resource) goType() reflect.Type {
	t := reflect.TypeOf(r.New()).Elem()
	if t.PkgPath() == "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured" {
		return nil
	}
	return t
}

// verbs served for every resource.
var servedVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

func newOf[T any, PT interface {
	*T
	runtime.Object
}]() func() runtime.Object {
	return func() runtime.Object { return PT(new(T)) }
}

// builtin returns the registry of built-in kinds litek8s serves.
func builtin() []*resource {
	return []*resource{
		{Version: "v1", Resource: "namespaces", Singular: "namespace", Kind: "Namespace",
			ShortNames: []string{"ns"}, New: newOf[corev1.Namespace](), NewList: newOf[corev1.NamespaceList](),
			Normalize: defaultNamespace, Prepare: prepareNamespace, Status: true,
			Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}},
		{Version: "v1", Resource: "configmaps", Singular: "configmap", Kind: "ConfigMap", Namespaced: true,
			ShortNames: []string{"cm"}, New: newOf[corev1.ConfigMap](), NewList: newOf[corev1.ConfigMapList]()},
		{Version: "v1", Resource: "secrets", Singular: "secret", Kind: "Secret", Namespaced: true,
			New: newOf[corev1.Secret](), NewList: newOf[corev1.SecretList](), Normalize: prepareSecret},
		{Version: "v1", Resource: "services", Singular: "service", Kind: "Service", Namespaced: true,
			ShortNames: []string{"svc"}, Categories: []string{"all"},
			New: newOf[corev1.Service](), NewList: newOf[corev1.ServiceList](), Normalize: defaultService, Prepare: prepareService, Status: true},
		{Version: "v1", Resource: "pods", Singular: "pod", Kind: "Pod", Namespaced: true,
			ShortNames: []string{"po"}, Categories: []string{"all"}, HasGeneration: true,
			New: newOf[corev1.Pod](), NewList: newOf[corev1.PodList](), Normalize: defaultPod, Prepare: preparePod,
			Status: true, Binding: true},
		{Version: "v1", Resource: "nodes", Singular: "node", Kind: "Node",
			ShortNames: []string{"no"}, New: newOf[corev1.Node](), NewList: newOf[corev1.NodeList](),
			Prepare: prepareNode, Status: true},
		{Version: "v1", Resource: "events", Singular: "event", Kind: "Event", Namespaced: true,
			ShortNames: []string{"ev"}, New: newOf[corev1.Event](), NewList: newOf[corev1.EventList]()},
		{Version: "v1", Resource: "serviceaccounts", Singular: "serviceaccount", Kind: "ServiceAccount",
			Namespaced: true, ShortNames: []string{"sa"},
			New: newOf[corev1.ServiceAccount](), NewList: newOf[corev1.ServiceAccountList]()},
		{Group: "apps", Version: "v1", Resource: "deployments", Singular: "deployment", Kind: "Deployment",
			Namespaced: true, ShortNames: []string{"deploy"}, Categories: []string{"all"}, HasGeneration: true,
			New: newOf[appsv1.Deployment](), NewList: newOf[appsv1.DeploymentList](), Normalize: prepareDeployment,
			Status: true, Scale: defaultScale},
		{Group: "apps", Version: "v1", Resource: "replicasets", Singular: "replicaset", Kind: "ReplicaSet",
			Namespaced: true, ShortNames: []string{"rs"}, Categories: []string{"all"}, HasGeneration: true,
			New: newOf[appsv1.ReplicaSet](), NewList: newOf[appsv1.ReplicaSetList](), Normalize: prepareReplicaSet,
			Status: true, Scale: defaultScale},
		{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Singular: "lease", Kind: "Lease",
			Namespaced: true, New: newOf[coordinationv1.Lease](), NewList: newOf[coordinationv1.LeaseList]()},
	}
}

// registry indexes the resources by group/version and plural. It is
// immutable: a change (a CRD) builds a new one that the Server swaps in.
type registry struct {
	all  []*resource
	byGV map[string]map[string]*resource // groupVersion → plural → resource
	// crdRev is the revision of the CRD table the registry was built from.
	crdRev uint64
}

func newRegistry(rs []*resource) *registry {
	reg := &registry{all: rs, byGV: make(map[string]map[string]*resource)}
	for _, r := range rs {
		gv := r.groupVersion()
		if reg.byGV[gv] == nil {
			reg.byGV[gv] = make(map[string]*resource)
		}
		reg.byGV[gv][r.Resource] = r
	}
	return reg
}

func (reg *registry) lookup(groupVersion, plural string) *resource {
	return reg.byGV[groupVersion][plural]
}

// scheme registers the served kinds' Go types (for decoding request bodies).
func (reg *registry) scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, coordinationv1.AddToScheme, apiextv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}
