package openapi

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// decodedDocs generates the served documents and decodes them as generic
// JSON, by document key.
func decodedDocs(t *testing.T) map[string]map[string]any {
	t.Helper()
	h := newServedHandler(t)
	docs := make(map[string]map[string]any)
	for key, d := range mustDocs(t, h) {
		var doc map[string]any
		if err := json.Unmarshal(d.body, &doc); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		docs[key] = doc
	}
	return docs
}

// at walks a decoded JSON value along keys; nil if absent.
func at(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// withoutDescriptions drops every "description", which are prose.
func withoutDescriptions(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if k != "description" {
				out[k] = withoutDescriptions(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = withoutDescriptions(e)
		}
		return out
	}
	return v
}

func ref(name string) string { return `{"$ref":"#/components/schemas/` + name + `"}` }

const (
	core = "io.k8s.api.core.v1."
	apps = "io.k8s.api.apps.v1."
	meta = "io.k8s.apimachinery.pkg.apis.meta.v1."
)

func TestSchemas(t *testing.T) {
	docs := decodedDocs(t)
	for _, tc := range []struct {
		name, doc string
		path      []string // under components.schemas
		want      string   // JSON, descriptions ignored
	}{
		{"configmap data is a map of strings", "api/v1", []string{core + "ConfigMap", "properties", "data"},
			`{"type":"object","additionalProperties":{"type":"string"}}`},
		{"binaryData is base64", "api/v1", []string{core + "ConfigMap", "properties", "binaryData"},
			`{"type":"object","additionalProperties":{"type":"string","format":"byte"}}`},
		{"metadata is a defaulted ref", "api/v1", []string{core + "ConfigMap", "properties", "metadata"},
			`{"default":{},"allOf":[` + ref(meta+"ObjectMeta") + `]}`},
		{"kind carries its gvk", "api/v1", []string{core + "ConfigMap", "x-kubernetes-group-version-kind"},
			`[{"group":"","kind":"ConfigMap","version":"v1"}]`},
		{"list kind carries its gvk", "apis/apps/v1", []string{apps + "DeploymentList", "x-kubernetes-group-version-kind"},
			`[{"group":"apps","kind":"DeploymentList","version":"v1"}]`},
		{"template refs PodTemplateSpec", "apis/apps/v1", []string{apps + "DeploymentSpec", "properties", "template"},
			`{"default":{},"allOf":[` + ref(core+"PodTemplateSpec") + `]}`},
		{"pointer ref has no default", "apis/apps/v1", []string{apps + "DeploymentSpec", "properties", "selector"},
			`{"allOf":[` + ref(meta+"LabelSelector") + `]}`},
		{"required from json tags", "apis/apps/v1", []string{apps + "DeploymentSpec", "required"},
			`["selector","template"]`},
		{"int32", "apis/apps/v1", []string{apps + "DeploymentSpec", "properties", "replicas"},
			`{"type":"integer","format":"int32"}`},
		{"patch strategy from struct tag", "apis/apps/v1", []string{apps + "DeploymentSpec", "properties", "strategy"},
			`{"default":{},"allOf":[` + ref(apps+"DeploymentStrategy") + `],"x-kubernetes-patch-strategy":"retainKeys"}`},
		{"containers merge on name", "api/v1", []string{core + "PodSpec", "properties", "containers"},
			`{"type":"array","items":` + ref(core+"Container") + `,"x-kubernetes-list-map-keys":["name"],` +
				`"x-kubernetes-list-type":"map","x-kubernetes-patch-merge-key":"name","x-kubernetes-patch-strategy":"merge"}`},
		{"service ports keyed by port and protocol", "api/v1", []string{core + "ServiceSpec", "properties", "ports", "x-kubernetes-list-map-keys"},
			`["port","protocol"]`},
		{"+default from the merge schema", "api/v1", []string{core + "ServicePort", "properties", "protocol", "default"},
			`"TCP"`},
		{"atomic struct", "api/v1", []string{meta + "LabelSelector", "x-kubernetes-map-type"}, `"atomic"`},
		{"finalizers are a set", "api/v1", []string{meta + "ObjectMeta", "properties", "finalizers"},
			`{"type":"array","items":{"type":"string"},"x-kubernetes-list-type":"set","x-kubernetes-patch-strategy":"merge"}`},
		{"int64", "api/v1", []string{meta + "ObjectMeta", "properties", "generation"}, `{"type":"integer","format":"int64"}`},
		{"Time", "api/v1", []string{meta + "Time"}, `{"type":"string","format":"date-time"}`},
		{"MicroTime", "api/v1", []string{meta + "MicroTime"}, `{"type":"string","format":"date-time"}`},
		{"Quantity", "api/v1", []string{"io.k8s.apimachinery.pkg.api.resource.Quantity"},
			`{"oneOf":[{"type":"string"},{"type":"number"}]}`},
		{"IntOrString", "api/v1", []string{"io.k8s.apimachinery.pkg.util.intstr.IntOrString"},
			`{"format":"int-or-string","oneOf":[{"type":"integer"},{"type":"string"}]}`},
		{"resource limits are Quantities", "api/v1", []string{core + "ResourceRequirements", "properties", "limits"},
			`{"type":"object","additionalProperties":` + ref("io.k8s.apimachinery.pkg.api.resource.Quantity") + `}`},
		{"creationTimestamp refs Time", "api/v1", []string{meta + "ObjectMeta", "properties", "creationTimestamp"},
			`{"allOf":[` + ref(meta+"Time") + `]}`},
		{"required scalar defaults to zero", "api/v1", []string{meta + "OwnerReference", "properties", "uid"},
			`{"type":"string","default":""}`},
		{"FieldsV1 is an object", "api/v1", []string{meta + "FieldsV1"}, `{"type":"object"}`},
		{"DeleteOptions gvk names the group too", "apis/apps/v1", []string{meta + "DeleteOptions", "x-kubernetes-group-version-kind"},
			`[{"group":"","kind":"DeleteOptions","version":"v1"},{"group":"apps","kind":"DeleteOptions","version":"v1"}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := withoutDescriptions(at(docs[tc.doc], append([]string{"components", "schemas"}, tc.path...)...))
			var want any
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				gotJSON, _ := json.Marshal(got)
				t.Errorf("%v:\n got %s\nwant %s", tc.path, gotJSON, tc.want)
			}
		})
	}
}

func TestSchemaDescriptions(t *testing.T) {
	docs := decodedDocs(t)
	if d, _ := at(docs["api/v1"], "components", "schemas", core+"ConfigMap", "description").(string); d == "" {
		t.Error("ConfigMap has no description")
	}
	if d, _ := at(docs["api/v1"], "components", "schemas", core+"ConfigMap", "properties", "kind", "description").(string); d == "" {
		t.Error("ConfigMap.kind (inlined TypeMeta) has no description")
	}
}

// widget is a custom kind the merge schema does not know: its schema comes
// from reflection alone.
type widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              widgetSpec `json:"spec"`
}

type widgetSpec struct {
	Ratio  float64              `json:"ratio"`
	Size   uint16               `json:"size,omitempty"`
	Raw    runtime.RawExtension `json:"raw,omitempty"`
	Any    any                  `json:"any,omitempty"`
	Next   *widgetSpec          `json:"next,omitempty"`
	Tags   []string             `json:"tags,omitzero"`
	Hidden string               `json:"-"`
	hidden string
}

type widgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []widget `json:"items"`
}

func (w *widget) DeepCopyObject() runtime.Object     { c := *w; return &c }
func (w *widgetList) DeepCopyObject() runtime.Object { c := *w; return &c }

func widgetKind() Kind {
	return Kind{
		Group: "golden.example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true,
		Type: reflect.TypeFor[widget](), ListType: reflect.TypeFor[widgetList](), Verbs: []string{"get", "list"},
	}
}

func TestCustomKindSchema(t *testing.T) {
	b := newSchemaBuilder(loadMergeHints([]Kind{widgetKind()}))
	name, err := b.define(reflect.TypeFor[widget]())
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(b.defs)
	if err != nil {
		t.Fatal(err)
	}
	var defs map[string]any
	if err := json.Unmarshal(body, &defs); err != nil {
		t.Fatal(err)
	}
	const spec = "com.github.litek8s.litek8s.internal.api.openapi.widgetSpec"
	if name != "com.github.litek8s.litek8s.internal.api.openapi.widget" {
		t.Errorf("name %q", name)
	}
	for path, want := range map[string]string{
		"ratio": `{"type":"number","format":"double","default":0}`,
		"size":  `{"type":"integer","format":"int32"}`,
		"raw":   `{"allOf":[` + ref("io.k8s.apimachinery.pkg.runtime.RawExtension") + `]}`,
		"any":   `{"type":"object"}`,
		"next":  `{"allOf":[` + ref(spec) + `]}`,
		"tags":  `{"type":"array","items":{"type":"string"}}`,
	} {
		var w any
		_ = json.Unmarshal([]byte(want), &w)
		if got := at(defs, spec, "properties", path); !reflect.DeepEqual(got, w) {
			g, _ := json.Marshal(got)
			t.Errorf("%s: got %s, want %s", path, g, want)
		}
	}
	if got := at(defs, spec, "required"); !reflect.DeepEqual(got, []any{"ratio"}) {
		t.Errorf("required %v, want [ratio]", got)
	}
	if len(at(defs, spec, "properties").(map[string]any)) != 6 {
		t.Errorf("hidden fields leaked: %v", at(defs, spec, "properties"))
	}
}

type badSpec struct {
	ByNumber map[int]string `json:"byNumber"`
}

type anonymousSpec struct {
	Inner struct{ A string } `json:"inner"`
}

type funcSpec struct {
	Hook func() `json:"hook"`
}

func TestUnsupportedType(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[badSpec](), reflect.TypeFor[anonymousSpec](), reflect.TypeFor[funcSpec]()} {
		_, err := newSchemaBuilder(&mergeHints{}).define(typ)
		if !errors.Is(err, ErrUnsupportedType) {
			t.Errorf("%v: err %v, want ErrUnsupportedType", typ, err)
		}
	}
}

func TestNewRejectsBadKinds(t *testing.T) {
	valid := widgetKind()
	for _, tc := range []struct {
		name  string
		kinds func() []Kind
		want  error
	}{
		{"no resource", func() []Kind { k := valid; k.Resource = ""; return []Kind{k} }, ErrInvalidKind},
		{"no list type", func() []Kind { k := valid; k.ListType = nil; return []Kind{k} }, ErrInvalidKind},
		{"not an object", func() []Kind { k := valid; k.Type = reflect.TypeFor[badSpec](); return []Kind{k} }, ErrInvalidKind},
		{"unknown verb", func() []Kind { k := valid; k.Verbs = []string{"get", "proxy"}; return []Kind{k} }, ErrInvalidKind},
		{"duplicate", func() []Kind { return []Kind{valid, valid} }, ErrDuplicateKind},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.kinds()); !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
		})
	}
}
