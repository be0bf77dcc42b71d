package registry

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
)

// Field selectors, resource by resource, as kube-apiserver 1.37 supports
// them. Two things decide what kube accepts and matches:
//
//   - the field label conversion registered for the kind (pkg/apis/*/v1
//     conversion.go): which labels a selector may use, the field each one
//     selects ("spec.host" selects "spec.nodeName") and the wording of the
//     400 for any other label. Kinds without one (ConfigMap, Deployment,
//     ...) get apimachinery's DefaultMetaV1FieldSelectorConversion:
//     metadata.name and metadata.namespace only.
//   - the kind's selectable field set (pkg/registry/*/strategy.go): the
//     values those fields have, which Derive computes at apply time into
//     kv.Derived.Fields.
//
// Adding a kind is one entry in fieldTable, keyed by the store's
// group-qualified plural.

// fieldValue is one selectable field and where its value comes from.
type fieldValue struct {
	name  string   // the field, as selectors name it after conversion
	paths []string // gjson paths of its value in the stored JSON; the first non-empty one wins
	conv  valueConv
}

// valueConv renders a JSON value the way kube's field set does.
type valueConv uint8

const (
	convString valueConv = iota // the string ("" when absent)
	convBool                    // strconv.FormatBool: "false" when absent
	convInt                     // strconv.Itoa: "0" when absent
	convScalar                  // a string, boolean or number as written: "" when absent (custom resources)
)

func str(name string, paths ...string) fieldValue     { return newFieldValue(name, convString, paths) }
func boolean(name string, paths ...string) fieldValue { return newFieldValue(name, convBool, paths) }
func integer(name string, paths ...string) fieldValue { return newFieldValue(name, convInt, paths) }

func newFieldValue(name string, conv valueConv, paths []string) fieldValue {
	if len(paths) == 0 {
		paths = []string{name}
	}
	return fieldValue{name: name, paths: paths, conv: conv}
}

// FieldSelectors is what one resource supports.
type FieldSelectors struct {
	// labels maps every label a selector may use to the field it selects.
	labels map[string]string
	// values are computed at apply time (metadata.name and
	// metadata.namespace come from the key instead).
	values []fieldValue
	// unsupported is kube's error message for any other label.
	unsupported func(label string) string
	// plan reads the values' paths in one pass (see derive).
	plan []pathGroup
}

// Which metadata fields a kind's label conversion accepts.
const (
	metaName          = iota // cluster-scoped kinds with a conversion: metadata.name
	metaNameNamespace        // metadata.name and metadata.namespace
)

// labelNotSupported is the wording of the core/v1, certificates and events
// conversions.
func labelNotSupported(label string) string { return "field label not supported: " + label }

// notKnown is apimachinery's DefaultMetaV1FieldSelectorConversion error.
func notKnown(label string) string {
	return fmt.Sprintf("%q is not a known field selector: only %q, %q", label, "metadata.name", "metadata.namespace")
}

// selectable builds the entry of a kind with a field label conversion that
// accepts meta's metadata fields and the names of values.
func selectable(meta int, unsupported func(string) string, values ...fieldValue) *FieldSelectors {
	fs := &FieldSelectors{labels: map[string]string{"metadata.name": "metadata.name"}, values: values,
		unsupported: unsupported}
	if meta == metaNameNamespace {
		fs.labels["metadata.namespace"] = "metadata.namespace"
	}
	for _, v := range values {
		fs.labels[v.name] = v.name
	}
	fs.plan = planPaths(values)
	return fs
}

// alias makes label select field too (kube converts the label).
func (fs *FieldSelectors) alias(label, field string) *FieldSelectors {
	fs.labels[label] = field
	return fs
}

// defaultFields is every kind without a conversion of its own.
var defaultFields = selectable(metaNameNamespace, notKnown)

// involvedObject are the fields of an Event's object reference: core/v1
// involvedObject, events.k8s.io/v1 regarding.
var involvedObject = []string{"kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"}

// fieldTable is the registry of field selectors, by group-qualified plural.
// It is built at package initialisation and never written afterwards.
var fieldTable = map[string]*FieldSelectors{
	"pods": selectable(metaNameNamespace, labelNotSupported,
		str("spec.nodeName"), str("spec.restartPolicy"), str("spec.schedulerName"),
		str("spec.serviceAccountName"), boolean("spec.hostNetwork"), str("status.phase"),
		str("status.podIP", "status.podIPs.0.ip", "status.podIP"), str("status.nominatedNodeName")).
		alias("spec.host", "spec.nodeName").     // old v1 clients
		alias("status.podIPs", "status.podIPs"), // accepted, but kube's field set has no value for it
	"nodes":                  selectable(metaName, labelNotSupported, boolean("spec.unschedulable")),
	"namespaces":             selectable(metaName, labelNotSupported, str("status.phase")),
	"secrets":                selectable(metaNameNamespace, labelNotSupported, str("type")),
	"services":               selectable(metaNameNamespace, labelNotSupported, str("spec.clusterIP"), str("spec.type")),
	"replicationcontrollers": selectable(metaNameNamespace, labelNotSupported, integer("status.replicas")),
	"events":                 coreEventFields(),
	"events.events.k8s.io":   eventsV1Fields(),
	"jobs.batch": selectable(metaNameNamespace, func(label string) string {
		return fmt.Sprintf("field label %q not supported for Job", label)
	}, integer("status.successful", "status.succeeded")),
	"certificatesigningrequests.certificates.k8s.io": selectable(metaName, labelNotSupported, str("spec.signerName")),
	// The kubelet and DRA drivers delete their slices by node and driver.
	"resourceslices.resource.k8s.io": selectable(metaName, func(label string) string {
		return "field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: " + label
	}, str("spec.nodeName"), str("spec.driver"), str("spec.pool.name")),
	"clustertrustbundles.certificates.k8s.io": selectable(metaName, labelNotSupported, str("spec.signerName")),
	"podcertificaterequests.certificates.k8s.io": selectable(metaNameNamespace, labelNotSupported, str("spec.signerName"),
		str("spec.podName"), str("spec.nodeName")),
}

// coreEventFields: core/v1 Event selects on its own field names.
func coreEventFields() *FieldSelectors {
	var values []fieldValue
	for _, f := range involvedObject {
		values = append(values, str("involvedObject."+f))
	}
	values = append(values, str("reason"), str("reportingComponent"),
		str("source", "source.component", "reportingComponent"), str("type"))
	return selectable(metaNameNamespace, labelNotSupported, values...)
}

// eventsV1Fields: an events.k8s.io/v1 Event is selected by its own names
// (regarding.*, reportingController), which kube maps to the core/v1
// field set.
func eventsV1Fields() *FieldSelectors {
	var values []fieldValue
	for _, f := range involvedObject {
		values = append(values, str("involvedObject."+f, "regarding."+f))
	}
	values = append(values, str("reason"), str("reportingComponent", "reportingController"),
		str("source", "deprecatedSource.component", "reportingController"), str("type"))
	fs := &FieldSelectors{labels: map[string]string{"metadata.name": "metadata.name",
		"metadata.namespace": "metadata.namespace", "reason": "reason", "type": "type",
		"reportingController": "reportingComponent"}, values: values, unsupported: labelNotSupported,
		plan: planPaths(values)}
	for _, f := range involvedObject {
		fs.labels["regarding."+f] = "involvedObject." + f
	}
	return fs
}

// FieldsFor returns the field selectors of a resource.
func FieldsFor(resource string) *FieldSelectors {
	if fs, ok := fieldTable[resource]; ok {
		return fs
	}
	return defaultFields
}

// FieldSelectors returns the field selectors of r.
func (r *Resource) FieldSelectors() *FieldSelectors {
	if r.Fields != nil {
		return r.Fields
	}
	return FieldsFor(r.StoreKey())
}

// Convert is kube's field label conversion, for fields.Selector.Transform.
func (fs *FieldSelectors) Convert(label, value string) (string, string, error) {
	if f, ok := fs.labels[label]; ok {
		return f, value, nil
	}
	return "", "", errors.New(fs.unsupported(label)) // the 400's message
}

// Derive computes the field values of one stored object in two scans:
// the top level of the object, then each member the paths go into (a
// pod's spec and status), instead of one scan per path. Values are
// substrings of raw (stored bytes are immutable) or interned. Empty
// values are left out: a selector reads an absent field as "", as kube's
// field sets hold it.
func (fs *FieldSelectors) Derive(raw []byte) map[string]string {
	if len(fs.values) == 0 || len(raw) == 0 {
		return nil
	}
	var found [maxFieldPaths]gjson.Result // by path index (fs.plan)
	doc := gjson.Parse(unsafe.String(&raw[0], len(raw)))
	doc.ForEach(func(k, v gjson.Result) bool {
		for i := range fs.plan {
			if g := &fs.plan[i]; g.top == k.Str {
				g.collect(v, &found)
			}
		}
		return true
	})
	var out map[string]string
	n := 0
	for _, v := range fs.values {
		var r gjson.Result
		for j := range v.paths { // the first present, non-empty one
			if r = found[n+j]; r.Exists() && r.String() != "" {
				break
			}
		}
		n += len(v.paths)
		if val := v.render(r); val != "" {
			if out == nil {
				out = make(map[string]string, len(fs.values))
			}
			out[v.name] = val
		}
	}
	return out
}

// maxFieldPaths bounds the paths of one resource's values.
const maxFieldPaths = 32

// pathGroup is the paths that start with one top-level member: the member
// itself, its own members (one scan of it) and deeper paths (gjson.Get).
type pathGroup struct {
	top    string
	self   []int            // path indexes of the member itself ("type", "reason")
	direct map[string][]int // member key → path indexes ("spec.nodeName")
	deep   []deepPath       // "status.podIPs.0.ip"
}

type deepPath struct {
	rest string
	idx  int
}

func (g *pathGroup) collect(v gjson.Result, found *[maxFieldPaths]gjson.Result) {
	for _, i := range g.self {
		found[i] = v
	}
	if len(g.direct) > 0 && v.IsObject() {
		v.ForEach(func(k, m gjson.Result) bool {
			for _, i := range g.direct[k.Str] {
				found[i] = m
			}
			return true
		})
	}
	for _, d := range g.deep {
		found[d.idx] = v.Get(d.rest)
	}
}

// planPaths groups the values' paths by top-level member, numbering them
// in order (value by value, path by path).
func planPaths(values []fieldValue) []pathGroup {
	var plan []pathGroup
	group := func(top string) *pathGroup {
		for i := range plan {
			if plan[i].top == top {
				return &plan[i]
			}
		}
		plan = append(plan, pathGroup{top: top, direct: map[string][]int{}})
		return &plan[len(plan)-1]
	}
	n := 0
	for _, v := range values {
		for _, p := range v.paths {
			top, rest, _ := strings.Cut(p, ".")
			g := group(top)
			switch {
			case rest == "":
				g.self = append(g.self, n)
			case !strings.Contains(rest, "."):
				g.direct[rest] = append(g.direct[rest], n)
			default:
				g.deep = append(g.deep, deepPath{rest: rest, idx: n})
			}
			n++
		}
	}
	if n > maxFieldPaths {
		panic("api: too many field selector paths")
	}
	return plan
}

// render is a value as kube's field set holds it.
func (v *fieldValue) render(r gjson.Result) string {
	switch v.conv {
	case convBool:
		return strconv.FormatBool(r.Type == gjson.True)
	case convInt:
		return strconv.FormatInt(r.Int(), 10)
	case convScalar:
		switch r.Type {
		case gjson.True, gjson.False, gjson.Number:
			return r.Raw
		}
	}
	if r.Type != gjson.String {
		return ""
	}
	return intern(r.Str)
}

// intern returns the shared copy of values that many objects hold, so that
// a hundred thousand pods do not each keep their own "Running".
func intern(s string) string {
	switch s {
	case "Always":
		return "Always"
	case "OnFailure":
		return "OnFailure"
	case "Never":
		return "Never"
	case "default-scheduler":
		return "default-scheduler"
	case "default":
		return "default"
	case "Pending":
		return "Pending"
	case "Running":
		return "Running"
	case "Succeeded":
		return "Succeeded"
	case "Failed":
		return "Failed"
	case "Unknown":
		return "Unknown"
	case "Active":
		return "Active"
	case "Terminating":
		return "Terminating"
	case "Opaque":
		return "Opaque"
	case "Normal":
		return "Normal"
	case "Warning":
		return "Warning"
	case "ClusterIP":
		return "ClusterIP"
	case "Pod":
		return "Pod"
	case "v1":
		return "v1"
	}
	return s
}
