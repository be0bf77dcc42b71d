package clients

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// The demo chart renders, with every part enabled, into objects that
// decode strictly into the k8s.io/api types (no unknown or duplicate
// fields), so a failure of TestHelm is the server's, not a chart typo.
func TestDemoChartRenders(t *testing.T) {
	bin := helmBinary(t)
	chart, err := filepath.Abs("testdata/charts/demo")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), bin, "template", "demo", chart, "--namespace", "demo",
		"--include-crds", "--set=widget.enabled=true,rbac.enabled=true,hookJob.enabled=true").CombinedOutput()
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	dec := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{Yaml: true, Strict: true})
	var kinds []string
	for _, doc := range strings.Split(string(out), "\n---\n") {
		if strings.TrimSpace(strings.TrimPrefix(doc, "---")) == "" {
			continue
		}
		if strings.Contains(doc, "apiVersion: demo.litek8s.io/v1") {
			kinds = append(kinds, "Widget") // the chart's own custom resource
			continue
		}
		_, gvk, err := dec.Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Errorf("rendered object does not decode strictly: %v\n%s", err, doc)
			continue
		}
		kinds = append(kinds, gvk.Kind)
	}
	slices.Sort(kinds)
	want := []string{"ConfigMap", "ConfigMap", "CustomResourceDefinition", "Deployment", "Job", "Role", "RoleBinding",
		"Secret", "Service", "ServiceAccount", "Widget"}
	if !slices.Equal(kinds, want) {
		t.Errorf("rendered kinds %v, want %v", kinds, want)
	}
}
