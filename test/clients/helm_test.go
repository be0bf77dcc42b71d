package clients

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// helmCLI runs the Helm CLI against a member's kubeconfig, with its own
// HOME and Helm directories.
type helmCLI struct {
	t   *testing.T
	bin string
	env []string
}

func newHelm(t *testing.T) *helmCLI {
	bin := helmBinary(t)
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"),
		"HELM_CACHE_HOME=" + filepath.Join(home, "cache"), "HELM_CONFIG_HOME=" + filepath.Join(home, "config"),
		"HELM_DATA_HOME=" + filepath.Join(home, "data")}
	return &helmCLI{t: t, bin: bin, env: env}
}

func (h *helmCLI) run(kubeconfig string, args ...string) string {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.bin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Env = h.env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		h.t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	h.t.Logf("helm %s (%v)", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return string(out)
}

// chartFeatures says which parts of testdata/charts/demo a variant uses.
type chartFeatures struct {
	crd, rbac, hookJob bool
	hooks              bool // false: --no-hooks
}

// releaseState is what the cluster must hold after a helm step.
type releaseState struct {
	revision     int
	message      string
	replicas     int32
	widgetSize   int64
	hookRevision string // data.revision of the hook ConfigMap ("" when hooks are off)
	hookJobs     []string
}

var widgetGVR = schema.GroupVersionResource{Group: "demo.litek8s.io", Version: "v1", Resource: "widgets"}

// Helm v3 installs, upgrades, rolls back and uninstalls
// testdata/charts/demo, one command through each member; after every step
// the test checks the chart's objects, Helm's release Secrets (one
// sh.helm.release.v1.demo.vN per revision) and Helm's own view.
//
// Hooks: Helm waits for a hook Job until it is Complete, and litek8s runs
// no job controller, so the test runs a stand-in (jobController) that marks
// Jobs succeeded through jobs/status, as kube-controller-manager does once
// the Job's pod succeeds; the hook's delete policy hook-succeeded then
// makes Helm delete it. A hook ConfigMap needs no controller. The
// "no-hooks" variant runs every command with --no-hooks; "core" leaves
// out the CRD, the custom resource, RBAC and the hook Job; "crd" adds the
// CRD and its custom resource to "core".
func TestHelm(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    chartFeatures
	}{
		{"core", chartFeatures{hooks: true}},
		{"crd", chartFeatures{crd: true, hooks: true}},
		{"full", chartFeatures{crd: true, rbac: true, hookJob: true, hooks: true}},
		{"no-hooks", chartFeatures{crd: true, rbac: true, hookJob: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHelm(t)
			c := membertest.StartCluster(t, 3)
			testHelmLifecycle(t, c, h, tc.f)
		})
	}
}

func testHelmLifecycle(t *testing.T, c *membertest.Cluster, h *helmCLI, f chartFeatures) {
	ctx := t.Context()
	cs := c.Clientset(0)
	if f.crd {
		requireServed(t, cs.Discovery(), "apiextensions.k8s.io/v1", "customresourcedefinitions", "CustomResourceDefinitions")
	}
	if f.rbac {
		requireServed(t, cs.Discovery(), "rbac.authorization.k8s.io/v1", "roles", "rbac.authorization.k8s.io/v1 Roles")
		requireServed(t, cs.Discovery(), "rbac.authorization.k8s.io/v1", "rolebindings", "rbac.authorization.k8s.io/v1 RoleBindings")
	}
	if f.hookJob && f.hooks {
		requireServed(t, cs.Discovery(), "batch/v1", "jobs", "batch/v1 Jobs")
		requireServed(t, cs.Discovery(), "batch/v1", "jobs/status", "the jobs/status subresource")
	}
	const ns, rel = "demo", "demo"
	chart, err := filepath.Abs("testdata/charts/demo")
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	if !f.crd {
		flags = append(flags, "--skip-crds")
	}
	flags = append(flags, fmt.Sprintf("--set=widget.enabled=%v,rbac.enabled=%v,hookJob.enabled=%v", f.crd, f.rbac, f.hookJob))
	var noHooks []string
	if !f.hooks {
		noHooks = []string{"--no-hooks"}
	}
	var jc *jobController
	if f.hookJob && f.hooks {
		createNamespace(t, cs, ns) // the stand-in job controller watches it from the start
		jc = startJobController(t, c.Clientset(2), ns)
	}
	hookRev := func(r string) string {
		if f.hooks {
			return r
		}
		return ""
	}
	var jobs []string
	hookJobs := func(rev string) []string {
		if f.hookJob && f.hooks {
			jobs = append(jobs, rel+"-hook/"+rev)
		}
		return jobs
	}

	args := append([]string{"install", rel, chart, "--namespace", ns, "--create-namespace", "--timeout", "60s"}, flags...)
	h.run(c.Kubeconfig(0), append(args, noHooks...)...)
	want := releaseState{revision: 1, message: "hello", replicas: 1, widgetSize: 1, hookRevision: hookRev("1"), hookJobs: hookJobs("1")}
	hookUIDs := []string{checkRelease(t, c, 1, h, ns, rel, f, want, jc)}

	args = append([]string{"upgrade", rel, chart, "--namespace", ns, "--timeout", "60s",
		"--set=message=world,replicas=2,widget.size=2"}, flags...)
	h.run(c.Kubeconfig(1), append(args, noHooks...)...)
	want = releaseState{revision: 2, message: "world", replicas: 2, widgetSize: 2, hookRevision: hookRev("2"), hookJobs: hookJobs("2")}
	hookUIDs = append(hookUIDs, checkRelease(t, c, 2, h, ns, rel, f, want, jc))

	// Rollback runs the post-rollback hooks of the revision rolled back to,
	// as rendered for it: the hook ConfigMap says revision 1 again (but is
	// a new object); the Job is a post-install/post-upgrade hook only.
	h.run(c.Kubeconfig(2), append([]string{"rollback", rel, "1", "--namespace", ns, "--timeout", "60s"}, noHooks...)...)
	want = releaseState{revision: 3, message: "hello", replicas: 1, widgetSize: 1, hookRevision: hookRev("1"), hookJobs: jobs}
	hookUIDs = append(hookUIDs, checkRelease(t, c, 0, h, ns, rel, f, want, jc))
	if f.hooks && (hookUIDs[0] == hookUIDs[1] || hookUIDs[1] == hookUIDs[2]) {
		t.Errorf("hook configmap uids %v: each hook run must replace it (before-hook-creation)", hookUIDs)
	}
	var history []struct {
		Revision    int
		Status      string
		Description string
	}
	if err := json.Unmarshal([]byte(h.run(c.Kubeconfig(0), "history", rel, "--namespace", ns, "-o", "json")), &history); err != nil {
		t.Fatal(err)
	}
	if len(history) != 3 || history[0].Status != "superseded" || history[1].Status != "superseded" ||
		history[2].Status != "deployed" || history[2].Description != "Rollback to 1" {
		t.Errorf("helm history: %+v", history)
	}

	h.run(c.Kubeconfig(0), append([]string{"uninstall", rel, "--namespace", ns, "--timeout", "60s"}, noHooks...)...)
	checkUninstalled(t, c, 1, ns, rel, f)
	if jc != nil {
		if _, errs := jc.state(); len(errs) > 0 {
			t.Errorf("job controller: %v", errs)
		}
	}
	c.SameObjects(ctx, "/api/v1/secrets", "/api/v1/configmaps", "/apis/apps/v1/deployments", "/api/v1/services")
}

// checkRelease checks, through member i, the objects of revision
// want.revision of release rel.
// It returns the uid of the hook ConfigMap ("" when there is none).
func checkRelease(t *testing.T, c *membertest.Cluster, i int, h *helmCLI, ns, rel string, f chartFeatures, want releaseState, jc *jobController) (hookUID string) {
	t.Helper()
	ctx := t.Context()
	cs := c.Clientset(i)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("revision %d: "+format, append([]any{want.revision}, args...)...)
	}
	owned := func(kind string, m metav1.ObjectMeta) {
		t.Helper()
		if m.Labels["app.kubernetes.io/managed-by"] != "Helm" || m.Annotations["meta.helm.sh/release-name"] != rel ||
			m.Annotations["meta.helm.sh/release-namespace"] != ns {
			fail("%s %s lacks Helm's ownership labels/annotations: %v %v", kind, m.Name, m.Labels, m.Annotations)
		}
	}

	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, rel+"-config", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("revision %d: configmap: %v", want.revision, err)
	}
	owned("ConfigMap", cm.ObjectMeta)
	if cm.Data["message"] != want.message {
		fail("configmap message %q, want %q", cm.Data["message"], want.message)
	}
	sec, err := cs.CoreV1().Secrets(ns).Get(ctx, rel+"-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("revision %d: secret: %v", want.revision, err)
	}
	owned("Secret", sec.ObjectMeta)
	if string(sec.Data["password"]) != "s3cret" || sec.Type != corev1.SecretTypeOpaque {
		fail("secret data %q type %q, want password=s3cret (stringData merged into data) Opaque", sec.Data, sec.Type)
	}
	if len(sec.StringData) != 0 {
		// Helm's three-way patch re-sends stringData on every upgrade;
		// kube merges it into data on every write and never stores it.
		fail("secret stores stringData %v", sec.StringData)
	}
	dep, err := cs.AppsV1().Deployments(ns).Get(ctx, rel, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("revision %d: deployment: %v", want.revision, err)
	}
	owned("Deployment", dep.ObjectMeta)
	if r := dep.Spec.Replicas; r == nil || *r != want.replicas {
		fail("deployment replicas %v, want %d", r, want.replicas)
	}
	if ctr := dep.Spec.Template.Spec.Containers; len(ctr) != 1 || ctr[0].Image != "registry.k8s.io/pause:3.10" ||
		len(ctr[0].Env) != 1 || ctr[0].Env[0].ValueFrom == nil || ctr[0].Env[0].ValueFrom.ConfigMapKeyRef.Name != rel+"-config" {
		fail("deployment containers %+v", ctr)
	}
	if dep.Spec.Template.Spec.ServiceAccountName != rel {
		fail("deployment serviceAccountName %q", dep.Spec.Template.Spec.ServiceAccountName)
	}
	svc, err := cs.CoreV1().Services(ns).Get(ctx, rel, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("revision %d: service: %v", want.revision, err)
	}
	owned("Service", svc.ObjectMeta)
	if p := svc.Spec.Ports; len(p) != 1 || p[0].Port != 80 || p[0].TargetPort.IntValue() != 8080 || svc.Spec.ClusterIP == "" {
		fail("service ports %+v clusterIP %q", p, svc.Spec.ClusterIP)
	}
	sa, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, rel, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("revision %d: serviceaccount: %v", want.revision, err)
	}
	owned("ServiceAccount", sa.ObjectMeta)
	if f.rbac {
		role, err := cs.RbacV1().Roles(ns).Get(ctx, rel+"-reader", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("revision %d: role: %v", want.revision, err)
		}
		owned("Role", role.ObjectMeta)
		if len(role.Rules) != 1 || !slices.Equal(role.Rules[0].Resources, []string{"configmaps"}) {
			fail("role rules %+v", role.Rules)
		}
		rb, err := cs.RbacV1().RoleBindings(ns).Get(ctx, rel+"-reader", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("revision %d: rolebinding: %v", want.revision, err)
		}
		owned("RoleBinding", rb.ObjectMeta)
		if rb.RoleRef.Name != rel+"-reader" || len(rb.Subjects) != 1 || rb.Subjects[0].Name != rel || rb.Subjects[0].Namespace != ns {
			fail("rolebinding %+v %+v", rb.RoleRef, rb.Subjects)
		}
	}
	if f.crd {
		dyn, err := dynamic.NewForConfig(c.RESTConfig(i))
		if err != nil {
			t.Fatal(err)
		}
		w, err := dyn.Resource(widgetGVR).Namespace(ns).Get(ctx, rel, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("revision %d: widget: %v", want.revision, err)
		}
		size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size")
		msg, _, _ := unstructured.NestedString(w.Object, "spec", "message")
		if size != want.widgetSize || msg != want.message {
			fail("widget spec %v, want size %d message %q", w.Object["spec"], want.widgetSize, want.message)
		}
	}

	// Hooks.
	hcm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, rel+"-hook", metav1.GetOptions{})
	switch {
	case want.hookRevision == "" && !apierrors.IsNotFound(err):
		fail("hook configmap with --no-hooks: %v %v", err, hcm.Data)
	case want.hookRevision != "" && err != nil:
		fail("hook configmap: %v", err)
	case want.hookRevision != "" && hcm.Data["revision"] != want.hookRevision:
		fail("hook configmap %v, want revision %s", hcm.Data, want.hookRevision)
	case err == nil:
		hookUID = string(hcm.UID)
	}
	if f.hookJob {
		// hook-succeeded: Helm deleted the Job once it was Complete.
		if _, err := cs.BatchV1().Jobs(ns).Get(ctx, rel+"-hook", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			fail("hook job after the hook: %v, want 404 (hook-delete-policy hook-succeeded)", err)
		}
	}
	if jc != nil {
		if done, _ := jc.state(); !slices.Equal(done, want.hookJobs) {
			fail("hook jobs run %v, want %v", done, want.hookJobs)
		}
	}

	checkReleaseSecrets(t, cs, ns, rel, want.revision)
	var list []struct {
		Name, Namespace, Status, Chart string
		Revision                       string
	}
	if err := json.Unmarshal([]byte(h.run(c.Kubeconfig(i), "list", "--namespace", ns, "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != rel || list[0].Status != "deployed" || list[0].Revision != fmt.Sprint(want.revision) || list[0].Chart != "demo-0.1.0" {
		fail("helm list: %+v", list)
	}
	var values map[string]any
	if err := json.Unmarshal([]byte(h.run(c.Kubeconfig(i), "get", "values", rel, "--namespace", ns, "--all", "-o", "json")), &values); err != nil {
		t.Fatal(err)
	}
	if values["message"] != want.message || values["replicas"] != float64(want.replicas) {
		fail("helm get values: %v", values)
	}
	return hookUID
}

// checkReleaseSecrets checks Helm's storage: one Secret per revision,
// labelled with the revision and its status, only the last one deployed.
func checkReleaseSecrets(t *testing.T, cs kubernetes.Interface, ns, rel string, revision int) {
	t.Helper()
	l, err := cs.CoreV1().Secrets(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "owner=helm,name=" + rel})
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, s := range l.Items {
		got = append(got, fmt.Sprintf("%s version=%s status=%s type=%s", s.Name, s.Labels["version"], s.Labels["status"], s.Type))
	}
	for v := 1; v <= revision; v++ {
		status := "superseded"
		if v == revision {
			status = "deployed"
		}
		want = append(want, fmt.Sprintf("sh.helm.release.v1.%s.v%d version=%d status=%s type=helm.sh/release.v1", rel, v, v, status))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("release secrets after revision %d:\n%s\nwant\n%s", revision, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// checkUninstalled checks that uninstall removed the release's objects and
// history, and kept what Helm keeps: the CRDs of crds/ and hook resources
// without a hook-succeeded policy.
func checkUninstalled(t *testing.T, c *membertest.Cluster, i int, ns, rel string, f chartFeatures) {
	t.Helper()
	ctx := t.Context()
	cs := c.Clientset(i)
	gone := func(what string, err error) {
		t.Helper()
		if !apierrors.IsNotFound(err) {
			t.Errorf("after uninstall: %s: %v, want 404", what, err)
		}
	}
	_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, rel+"-config", metav1.GetOptions{})
	gone("configmap", err)
	_, err = cs.CoreV1().Secrets(ns).Get(ctx, rel+"-secret", metav1.GetOptions{})
	gone("secret", err)
	_, err = cs.AppsV1().Deployments(ns).Get(ctx, rel, metav1.GetOptions{})
	gone("deployment", err)
	_, err = cs.CoreV1().Services(ns).Get(ctx, rel, metav1.GetOptions{})
	gone("service", err)
	_, err = cs.CoreV1().ServiceAccounts(ns).Get(ctx, rel, metav1.GetOptions{})
	gone("serviceaccount", err)
	if f.rbac {
		_, err = cs.RbacV1().Roles(ns).Get(ctx, rel+"-reader", metav1.GetOptions{})
		gone("role", err)
		_, err = cs.RbacV1().RoleBindings(ns).Get(ctx, rel+"-reader", metav1.GetOptions{})
		gone("rolebinding", err)
	}
	if f.crd {
		dyn, err := dynamic.NewForConfig(c.RESTConfig(i))
		if err != nil {
			t.Fatal(err)
		}
		_, err = dyn.Resource(widgetGVR).Namespace(ns).Get(ctx, rel, metav1.GetOptions{})
		gone("widget", err)
		if _, err := dyn.Resource(crdGVR).Get(ctx, "widgets.demo.litek8s.io", metav1.GetOptions{}); err != nil {
			t.Errorf("after uninstall: CRD: %v (Helm never deletes the CRDs of crds/)", err)
		}
	}
	if f.hooks {
		if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, rel+"-hook", metav1.GetOptions{}); err != nil {
			t.Errorf("after uninstall: hook configmap: %v (Helm does not delete hook resources on uninstall)", err)
		}
	}
	l, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm"})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 0 {
		t.Errorf("after uninstall: %d release secrets, want none", len(l.Items))
	}
}
