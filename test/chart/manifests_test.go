package chart

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// object is one rendered manifest: its YAML, its generic form and, for a
// kind of k8s.io/api, the typed object it decodes into strictly.
type object struct {
	yaml  string
	u     *unstructured.Unstructured
	typed runtime.Object // nil for kinds outside client-go's scheme
}

func (o object) id() string { return o.u.GetKind() + "/" + o.u.GetName() }

// manifests is the output of `helm template`, in order.
type manifests []object

// strictDecoder decodes YAML into client-go's types, refusing unknown and
// duplicate fields.
var strictDecoder = func() runtime.Decoder {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	return json.NewSerializerWithOptions(json.DefaultMetaFactory, s, s, json.SerializerOptions{Yaml: true, Strict: true})
}()

// parseManifests splits a multi-document YAML stream into objects; a
// document of a built-in kind must decode strictly.
func parseManifests(t *testing.T, stream string) manifests {
	t.Helper()
	var out manifests
	for _, doc := range strings.Split("\n"+stream, "\n---") {
		if isEmptyDoc(doc) {
			continue
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("rendered YAML does not parse: %v\n%s", err, doc)
		}
		o := object{yaml: doc, u: &unstructured.Unstructured{Object: m}}
		if !strings.HasPrefix(o.u.GetAPIVersion(), "monitoring.coreos.com/") {
			typed, _, err := strictDecoder.Decode([]byte(doc), nil, nil)
			if err != nil {
				t.Fatalf("rendered %s does not decode strictly: %v\n%s", o.id(), err, doc)
			}
			o.typed = typed
		}
		out = append(out, o)
	}
	return out
}

// isEmptyDoc is true for a document of only comments and blank lines.
func isEmptyDoc(doc string) bool {
	for l := range strings.SplitSeq(doc, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

// ids lists kind/name of every object, sorted.
func (ms manifests) ids() []string {
	var out []string
	for _, o := range ms {
		out = append(out, o.id())
	}
	slices.Sort(out)
	return out
}

// get returns the object of kind and name, failing the test when absent.
func (ms manifests) get(t *testing.T, kind, name string) object {
	t.Helper()
	for _, o := range ms {
		if o.u.GetKind() == kind && o.u.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s/%s rendered; have %v", kind, name, ms.ids())
	return object{}
}

// has is true when an object of kind and name was rendered.
func (ms manifests) has(kind, name string) bool {
	for _, o := range ms {
		if o.u.GetKind() == kind && o.u.GetName() == name {
			return true
		}
	}
	return false
}

// ofKind returns the objects of kind.
func (ms manifests) ofKind(kind string) manifests {
	var out manifests
	for _, o := range ms {
		if o.u.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// statefulSet returns the chart's only StatefulSet.
func (ms manifests) statefulSet(t *testing.T) *appsv1.StatefulSet {
	t.Helper()
	sts := ms.ofKind("StatefulSet")
	if len(sts) != 1 {
		t.Fatalf("%d StatefulSets rendered, want 1", len(sts))
	}
	return sts[0].typed.(*appsv1.StatefulSet)
}

func (ms manifests) configMap(t *testing.T, name string) *corev1.ConfigMap {
	t.Helper()
	return ms.get(t, "ConfigMap", name).typed.(*corev1.ConfigMap)
}

func (ms manifests) secret(t *testing.T, name string) *corev1.Secret {
	t.Helper()
	return ms.get(t, "Secret", name).typed.(*corev1.Secret)
}

func (ms manifests) service(t *testing.T, name string) *corev1.Service {
	t.Helper()
	return ms.get(t, "Service", name).typed.(*corev1.Service)
}

// yamlStream joins the objects back into one stream (for kubectl).
func (ms manifests) yamlStream() string {
	var b strings.Builder
	for _, o := range ms {
		fmt.Fprintf(&b, "---\n%s\n", strings.TrimSpace(o.yaml))
	}
	return b.String()
}

// nodeConfig parses the members' config file (config.yaml of the config
// ConfigMap).
func nodeConfig(t *testing.T, cm *corev1.ConfigMap) map[string]any {
	t.Helper()
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(cm.Data["config.yaml"]), &cfg); err != nil {
		t.Fatalf("config.yaml: %v\n%s", err, cm.Data["config.yaml"])
	}
	return cfg
}
