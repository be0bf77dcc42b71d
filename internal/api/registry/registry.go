package registry

import (
	"context"
	"fmt"
	authorizationv1 "k8s.io/api/authorization/v1"
	"reflect"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/litek8s/litek8s/internal/api/table"
)

// Resource is one row of the registry: everything the generic handlers need
// to serve a kind.
type Resource struct {
	Group, Version, Resource, Singular, Kind string
	Namespaced                               bool
	ShortNames, Categories                   []string
	// New returns an empty typed object and its list.
	New, NewList func() runtime.Object
	// Prepare applies the kind's server-side defaults on create, after the
	// generic metadata (uid, timestamps) is set. Optional.
	Prepare func(obj runtime.Object)
	// PrepareUpdate applies the kind's server-side rules of an update of
	// the main resource that need the stored object old. Optional.
	PrepareUpdate func(obj, old runtime.Object)
	// HasGeneration: metadata.generation starts at 1 and is bumped when
	// spec changes.
	HasGeneration bool
	// Verbs served on the resource; nil means servedVerbs (see ServedVerbs).
	Verbs []string
	// Status: the resource has a status subresource (a PUT or PATCH of the
	// main resource keeps the stored status; /status changes only status).
	Status bool
	// Scale, when set, serves the scale subresource (autoscaling/v1 Scale).
	Scale *ScaleSpec
	// Binding: pods/binding (POST sets spec.nodeName).
	Binding bool
	// TokenRequest: serviceaccounts/token (POST issues a token).
	TokenRequest bool
	// Eviction: pods/eviction (POST of a policy/v1 Eviction: eviction.go).
	Eviction bool
	// PodSubresources: pods/ephemeralcontainers and pods/resize (podsub.go).
	PodSubresources bool
	// Approval: the approval subresource of CertificateSigningRequests
	// (like status, but it changes only the Approved and Denied
	// conditions).
	Approval bool
	// Validate checks kind-specific rules (immutable fields, …) on create
	// (old nil) and update. Optional.
	Validate func(obj, old runtime.Object) field.ErrorList
	// ValidateContext checks what needs the request's context, after
	// Validate: a custom resource's x-kubernetes-validations (CEL, skipped
	// when Validate found errors that block them, as in kube) and a CRD's
	// rules. Optional.
	ValidateContext func(ctx context.Context, obj, old runtime.Object) field.ErrorList
	// Normalize runs on every write (create, update, patch, apply result)
	// right after decoding and before managedFields are computed: kube's
	// scheme defaults (SetDefaults_*) for built-in kinds, pruning and schema
	// defaults for custom resources. Fields it sets belong to the writer in
	// managedFields, as in kube; create-only mutations that kube does not
	// attribute to the writer (allocations, status) belong in Prepare.
	// Must be idempotent. Optional.
	Normalize func(obj runtime.Object)
	// DefaultOnRead applies a custom resource's schema defaults to stored
	// bytes as they are served (kube defaults what it reads from storage,
	// so a default added later shows on old objects); nil when the schema
	// has no defaults. Optional.
	DefaultOnRead func(raw []byte) []byte
	// Review makes the resource an access review: created, never
	// stored, answered by filling in its status.
	Review bool
	// UnknownFields lists the fields of an object its schema does not
	// declare (custom resources; pruned by Normalize). Optional.
	UnknownFields func(obj runtime.Object) []string
	// Custom marks a custom resource (served from a CRD); Schema is its
	// OpenAPI schema and ListKind its list kind.
	Custom   bool
	Schema   *spec.Schema
	ListKind string
	// Fields, when set, replaces fieldTable for field selectors (custom
	// resources: the CRD version's selectableFields).
	Fields *FieldSelectors
	// Printer, when set, replaces table.Lookup for Tables (custom
	// resources: the CRD's printer columns, evaluated at request time).
	Printer *table.Printer
	// Deprecation, when set, is the warning kube sends with every request
	// on the resource (Warning: 299 - "…").
	Deprecation string
	// Convert, when set, converts stored objects of a custom resource to
	// and from this row's version: the CRD's conversion webhook
	// (strategy Webhook), on the rows of the versions other than the
	// storage version, which is StorageVersion. nil: the stored bytes are
	// served with only their apiVersion rewritten (served()).
	Convert        func(ctx context.Context, objs [][]byte, version string) ([][]byte, error)
	StorageVersion string
}

// ScaleSpec says where a resource keeps what its Scale shows, as JSON
// paths like a CRD's scale subresource (".spec.replicas").
type ScaleSpec struct {
	SpecReplicas, StatusReplicas, LabelSelector string
	// SelectorIsMap: the selector is a plain label map (a
	// ReplicationController's), not a LabelSelector.
	SelectorIsMap bool
}

// defaultScale is the scale of deployments, replicasets and statefulsets.
var defaultScale = &ScaleSpec{SpecReplicas: ".spec.replicas", StatusReplicas: ".status.replicas",
	LabelSelector: ".spec.selector"}

// ServedVerbs returns the verbs served on r.
func (r *Resource) ServedVerbs() []string {
	if r.Verbs != nil {
		return r.Verbs
	}
	return servedVerbs
}

// StoreKey is the group-qualified plural used as the store's resource name.
func (r *Resource) StoreKey() string {
	if r.Group == "" {
		return r.Resource
	}
	return r.Resource + "." + r.Group
}

// GroupVersion returns the group/version string ("v1", "apps/v1").
func (r *Resource) GroupVersion() string {
	return schema.GroupVersion{Group: r.Group, Version: r.Version}.String()
}

// GVK returns the resource's group, version and kind.
func (r *Resource) GVK() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// GroupResource returns the resource's group and plural.
func (r *Resource) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: r.Group, Resource: r.Resource}
}

// GoType is the Go type of a built-in kind (nil for a custom resource).
func (r *Resource) GoType() reflect.Type {
	t := reflect.TypeOf(r.New()).Elem()
	if t.PkgPath() == "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured" {
		return nil
	}
	return t
}

// UnknownFieldErrors reports the fields of obj that r's schema does not
// declare (custom resources), worded like the decoder's strict errors, so
// that fieldValidation treats them alike.
func (r *Resource) UnknownFieldErrors(obj runtime.Object) []error {
	if r.UnknownFields == nil {
		return nil
	}
	var errs []error
	for _, p := range r.UnknownFields(obj) {
		errs = append(errs, fmt.Errorf("unknown field %q", p))
	}
	return errs
}

// verbs served for every resource.
var servedVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// NewOf returns a New func for the Go type T.
func NewOf[T any, PT interface {
	*T
	runtime.Object
}]() func() runtime.Object {
	return func() runtime.Object { return PT(new(T)) }
}

// Builtin returns the rows of the built-in kinds litek8s serves: each API
// group's rows are in <group>.go.
func Builtin() []*Resource {
	return slices.Concat(coreKinds(), appsKinds(), batchKinds(), autoscalingKinds(), policyKinds(),
		networkingKinds(), rbacKinds(), storageKinds(), schedulingKinds(), coordinationKinds(),
		discoveryKinds(), eventsKinds(), admissionregistrationKinds(), authorizationKinds(),
		nodeKinds(), resourceKinds(), certificatesKinds(), authenticationKinds(), flowcontrolKinds(),
		apiregistrationKinds())
}

// Registry indexes the resources by group/version and plural. It is
// immutable: a change (a CRD) builds a new one that the Server swaps in.
type Registry struct {
	all  []*Resource
	byGV map[string]map[string]*Resource // groupVersion → plural → resource
	// CRDRev is the revision of the CRD table the registry was built from
	// (set by its builder before the registry is shared).
	CRDRev uint64
}

// New indexes rs.
func New(rs []*Resource) *Registry {
	reg := &Registry{all: rs, byGV: make(map[string]map[string]*Resource)}
	for _, r := range rs {
		gv := r.GroupVersion()
		if reg.byGV[gv] == nil {
			reg.byGV[gv] = make(map[string]*Resource)
		}
		reg.byGV[gv][r.Resource] = r
	}
	return reg
}

// Lookup returns the resource served at groupVersion and plural, nil if
// none is.
func (reg *Registry) Lookup(groupVersion, plural string) *Resource {
	return reg.byGV[groupVersion][plural]
}

// ServesGroupVersion reports whether any resource is served at
// groupVersion (the aggregator proxies only group/versions that are not).
func (reg *Registry) ServesGroupVersion(groupVersion string) bool {
	return reg.byGV[groupVersion] != nil
}

// Scheme registers the served kinds' Go types (for decoding request bodies).
func (reg *Registry) Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, coordinationv1.AddToScheme, apiextv1.AddToScheme,
		batchv1.AddToScheme, autoscalingv2.AddToScheme, policyv1.AddToScheme, networkingv1.AddToScheme, rbacv1.AddToScheme,
		storagev1.AddToScheme, schedulingv1.AddToScheme, discoveryv1.AddToScheme, eventsv1.AddToScheme, authorizationv1.AddToScheme,
		admissionregistrationv1.AddToScheme,
		nodev1.AddToScheme, resourcev1.AddToScheme, certificatesv1.AddToScheme, authenticationv1.AddToScheme,
		flowcontrolv1.AddToScheme,
		apiregv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// All returns every row, in the order the registry was built from.
func (reg *Registry) All() []*Resource { return reg.all }
