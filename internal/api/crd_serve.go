package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/jsonpath"

	"github.com/litek8s/litek8s/internal/api/crdconversion"
	"github.com/litek8s/litek8s/internal/api/crdvalidation"
	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/api/table"
	"github.com/litek8s/litek8s/internal/kv"
)

// customResources returns the registry rows of a CRD's served versions.
// All versions share one store key. With conversion None only apiVersion
// differs (served()); with a conversion webhook conv, the rows of the
// versions other than the storage version convert what they serve and
// store (crd_convert.go). The versions' CEL rules come from rules
// (compiled once per CRD generation).
func customResources(crd *apiextv1.CustomResourceDefinition, rules *crdvalidation.Compiler, conv *crdconversion.Webhook) []*registry.Resource {
	storage := ""
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			storage = v.Name
		}
	}
	var rows []*registry.Resource
	n := crd.Spec.Names
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if !v.Served {
			continue
		}
		gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: n.Kind}
		listGVK := gvk.GroupVersion().WithKind(n.ListKind)
		r := &registry.Resource{Group: crd.Spec.Group, Version: v.Name, Resource: n.Plural, Singular: n.Singular,
			Kind: n.Kind, Namespaced: crd.Spec.Scope == apiextv1.NamespaceScoped,
			ShortNames: n.ShortNames, Categories: n.Categories, HasGeneration: true, Custom: true,
			Verbs: []string{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"},
			New: func() runtime.Object {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(gvk)
				return u
			},
			NewList: func() runtime.Object {
				l := &unstructured.UnstructuredList{}
				l.SetGroupVersionKind(listGVK)
				return l
			},
			Printer:  customPrinter(v.AdditionalPrinterColumns),
			Fields:   registry.CustomFieldSelectors(crd.Spec.Scope == apiextv1.NamespaceScoped, v.SelectableFields),
			ListKind: n.ListKind,
		}
		if sr := v.Subresources; sr != nil {
			r.Status = sr.Status != nil
			if r.Status { // with a status subresource, a create does not set status
				r.Prepare = func(obj runtime.Object) {
					if u, ok := obj.(*unstructured.Unstructured); ok {
						unstructured.RemoveNestedField(u.Object, "status")
					}
				}
			}
			if sc := sr.Scale; sc != nil {
				r.Scale = &registry.ScaleSpec{SpecReplicas: sc.SpecReplicasPath, StatusReplicas: sc.StatusReplicasPath}
				if sc.LabelSelectorPath != nil {
					r.Scale.LabelSelector = *sc.LabelSelectorPath
				}
			}
		}
		if conv != nil && v.Name != storage {
			r.Convert, r.StorageVersion = conv.Convert, storage
		}
		key := crdvalidation.Key{UID: crd.UID, Generation: crd.Generation, Version: v.Name}
		compile := func(st *structuralschema.Structural) *crdvalidation.Rules { return rules.Rules(key, st) }
		if err := withSchema(r, v, compile); err != nil {
			continue // validateCRD refused such schemas; an old one is not served
		}
		rows = append(rows, r)
	}
	return rows
}

// customPrinter builds the Table printer of a CRD version: Name plus its
// additionalPrinterColumns, or Name and Age when it has none. Its cells are
// evaluated when a Table is served (the columns come from the CRD, not from
// the apply-time index): the one place a stored object is parsed to serve
// a read, and only for Tables of custom resources.
func customPrinter(cols []apiextv1.CustomResourceColumnDefinition) *table.Printer {
	if len(cols) == 0 {
		return table.NewCustom([]table.Column{table.NameColumn(), table.AgeColumn()}, func(raw []byte) []kv.Cell {
			var m struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			}
			json.Unmarshal(raw, &m)
			return []kv.Cell{jsonCell(m.Metadata.Name), {Since: m.Metadata.CreationTimestamp.Time}}
		})
	}
	defs := []table.Column{table.NameColumn()}
	paths := make([]*jsonpath.JSONPath, len(cols))
	for i, c := range cols {
		desc := c.Description
		if desc == "" {
			desc = "Custom resource definition column (in JSONPath format): " + c.JSONPath
		}
		defs = append(defs, table.Column{Name: c.Name, Type: c.Type, Format: c.Format, Description: desc, Priority: int(c.Priority)})
		jp := jsonpath.New(c.Name).AllowMissingKeys(true)
		if err := jp.Parse(fmt.Sprintf("{%s}", c.JSONPath)); err == nil {
			paths[i] = jp
		}
	}
	return table.NewCustom(defs, func(raw []byte) []kv.Cell {
		var obj map[string]any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&obj); err != nil {
			return nil
		}
		name, _, _ := unstructured.NestedString(obj, "metadata", "name")
		cells := []kv.Cell{jsonCell(name)}
		for i, c := range cols {
			cells = append(cells, columnCell(paths[i], c.Type, obj))
		}
		return cells
	})
}

// columnCell evaluates one printer column the way kube's CRD table
// convertor does: missing → null, typed by the column's type.
func columnCell(jp *jsonpath.JSONPath, typ string, obj map[string]any) kv.Cell {
	if jp == nil {
		return kv.Cell{JSON: []byte("null")}
	}
	res, err := jp.FindResults(obj)
	if err != nil || len(res) == 0 || len(res[0]) == 0 {
		return kv.Cell{JSON: []byte("null")}
	}
	v := res[0][0].Interface()
	switch typ {
	case "string":
		var buf bytes.Buffer
		if jp.PrintResults(&buf, []reflect.Value{reflect.ValueOf(v)}) != nil {
			return kv.Cell{JSON: []byte("null")}
		}
		return jsonCell(buf.String())
	case "integer":
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				return kv.Cell{JSON: strconv.AppendInt(nil, i, 10)}
			}
			if f, err := n.Float64(); err == nil {
				return kv.Cell{JSON: strconv.AppendInt(nil, int64(f), 10)}
			}
		}
	case "number":
		if n, ok := v.(json.Number); ok {
			if f, err := n.Float64(); err == nil {
				return jsonCell(f)
			}
		}
	case "boolean":
		if b, ok := v.(bool); ok {
			return jsonCell(b)
		}
	case "date":
		if s, ok := v.(string); ok {
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return jsonCell("<invalid>")
			}
			return kv.Cell{Since: t}
		}
	}
	return kv.Cell{JSON: []byte("null")}
}

func jsonCell(v any) kv.Cell {
	b, _ := json.Marshal(v)
	return kv.Cell{JSON: b}
}

// printer returns the Table printer of r.
func printer(r *registry.Resource) *table.Printer {
	if r.Printer != nil {
		return r.Printer
	}
	return table.Lookup(r.StoreKey())
}

// served returns the bytes of a stored object of r as r serves them: a
// custom resource written through another version of its CRD is stored
// with that version's apiVersion; conversion is None, so only apiVersion
// changes (its bytes lead a custom resource: keys are sorted). Built-in
// kinds' bytes are returned as they are.
func served(r *registry.Resource, raw []byte) []byte {
	if r.DefaultOnRead != nil {
		raw = r.DefaultOnRead(raw)
	}
	const lead = `{"apiVersion":"`
	if !r.Custom || !bytes.HasPrefix(raw, []byte(lead)) {
		return raw
	}
	end := bytes.IndexByte(raw[len(lead):], '"')
	want := r.GroupVersion()
	if end < 0 || string(raw[len(lead):len(lead)+end]) == want {
		return raw
	}
	out := make([]byte, 0, len(raw)+len(want))
	out = append(append(append(out, lead...), want...), raw[len(lead)+end:]...)
	return out
}
