package openapi

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// kubectl runs the kubectl on PATH against srv and returns its combined
// output and error.
type kubectl struct {
	kubeconfig, cacheDir, dir string
}

func newKubectl(t *testing.T, serverURL string) kubectl {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl not on PATH")
	}
	dir := t.TempDir()
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: litek8s
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: test
  user:
    token: test-token
contexts:
- name: litek8s
  context: {cluster: litek8s, user: test, namespace: default}
current-context: litek8s
`, serverURL)
	k := kubectl{kubeconfig: filepath.Join(dir, "kubeconfig"), cacheDir: filepath.Join(dir, "cache"), dir: dir}
	writeFile(t, k.kubeconfig, cfg)
	return k
}

func (k kubectl) run(ctx context.Context, args ...string) (string, error) {
	args = append([]string{"--kubeconfig", k.kubeconfig, "--cache-dir", k.cacheDir}, args...)
	cmd := exec.CommandContext(ctx, "kubectl", args...)
	cmd.Env = append(os.Environ(), "HOME="+k.dir, "KUBECONFIG="+k.kubeconfig)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// manifest writes a YAML file into the kubectl's directory.
func (k kubectl) manifest(t *testing.T, name, yaml string) string {
	t.Helper()
	path := filepath.Join(k.dir, name)
	writeFile(t, path, yaml)
	return path
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

const deploymentYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  %s: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:%s
`

const configMapYAML = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  mode: fast
`

// TestKubectlApply runs the real kubectl apply against the documents:
// kubectl must find the fieldValidation parameter (it then sends
// fieldValidation=Strict and leaves unknown fields to the server) and the
// strategic-merge-patch content type (it then patches with it), all from
// OpenAPI v3, never asking for /openapi/v2.
func TestKubectlApply(t *testing.T) {
	kinds := servedKinds()
	srv := newFakeAPIServer(t, newServedHandlerFor(t, kinds), kinds)
	k := newKubectl(t, srv.URL)
	ctx := t.Context()

	t.Run("typo is left to the server", func(t *testing.T) {
		out, err := k.run(ctx, "apply", "-f", k.manifest(t, "typo.yaml", fmt.Sprintf(deploymentYAML, "replicass", "1.27")))
		if err == nil || !strings.Contains(out, `unknown field "replicass"`) {
			t.Fatalf("apply with a typo: err %v, output:\n%s", err, out)
		}
		posts := srv.recorded("POST")
		if len(posts) != 1 || !strings.Contains(string(posts[0].body), "replicass") {
			t.Fatalf("want one POST carrying the typo to the server, got %d: %v", len(posts), posts)
		}
		t.Logf("kubectl apply (typo): %v\n%s", err, out)
	})
	t.Run("valid deployment", func(t *testing.T) {
		out := mustRun(t, k, "apply", "-f", k.manifest(t, "deploy.yaml", fmt.Sprintf(deploymentYAML, "replicas", "1.27")))
		wantPost(t, srv, "/apis/apps/v1/namespaces/default/deployments", out)
	})
	t.Run("configmap", func(t *testing.T) {
		out := mustRun(t, k, "apply", "-f", k.manifest(t, "cm.yaml", configMapYAML))
		wantPost(t, srv, "/api/v1/namespaces/default/configmaps", out)
	})
	t.Run("change patches strategically", func(t *testing.T) {
		out := mustRun(t, k, "apply", "-f", k.manifest(t, "deploy2.yaml", fmt.Sprintf(deploymentYAML, "replicas", "1.28")))
		patches := srv.recorded("PATCH")
		if len(patches) != 1 || patches[0].contentType != "application/strategic-merge-patch+json" ||
			!strings.Contains(patches[0].query, "fieldValidation=Strict") {
			t.Fatalf("want one strategic merge PATCH with fieldValidation=Strict, got %+v", patches)
		}
		t.Logf("kubectl apply (change): %s\nPATCH %s %s", out, patches[0].query, patches[0].body)
	})
	if paths := srv.paths(); slices.Contains(paths, "GET /openapi/v2") {
		t.Errorf("kubectl fell back to OpenAPI v2: %v", paths)
	}
}

// wantPost checks that the last POST went to path with
// fieldValidation=Strict, the sign that kubectl found server-side field
// validation in the document.
func wantPost(t *testing.T, srv *fakeAPIServer, path, out string) {
	t.Helper()
	posts := srv.recorded("POST")
	last := posts[len(posts)-1]
	if last.path != path || !strings.Contains(last.query, "fieldValidation=Strict") {
		t.Fatalf("last POST %s?%s, want %s with fieldValidation=Strict", last.path, last.query, path)
	}
	t.Logf("kubectl: %sPOST %s?%s", out, last.path, last.query)
}

func mustRun(t *testing.T, k kubectl, args ...string) string {
	t.Helper()
	out, err := k.run(t.Context(), args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// TestKubectlExplain: kubectl explain reads the schemas of the apps/v1
// document.
func TestKubectlExplain(t *testing.T) {
	kinds := servedKinds()
	srv := newFakeAPIServer(t, newServedHandlerFor(t, kinds), kinds)
	k := newKubectl(t, srv.URL)
	for _, tc := range []struct {
		field string
		want  []string
	}{
		{"deployment.spec.strategy", []string{"FIELD: strategy <DeploymentStrategy>", "rollingUpdate", "type"}},
		{"deployment.spec.template.spec.containers.resources.limits",
			[]string{"FIELD: limits <map[string]Quantity>"}},
		{"configmap.data", []string{"FIELD: data <map[string]string>"}},
		{"lease.spec.renewTime", []string{"FIELD: renewTime <string>"}},
	} {
		t.Run(tc.field, func(t *testing.T) {
			out := mustRun(t, k, "explain", tc.field)
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("kubectl explain %s: missing %q in:\n%s", tc.field, want, out)
				}
			}
			t.Logf("kubectl explain %s:\n%s", tc.field, out)
		})
	}
}
