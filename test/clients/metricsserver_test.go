package clients

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// metricsServerChart is kubernetes-sigs/metrics-server's chart, from the
// Go module proxy into the module cache (`go mod download
// sigs.k8s.io/metrics-server@v0.8.0`; test/realcluster/build.sh builds its
// binary from the same module). Without it the test skips, and fails when
// CI=true.
func metricsServerChart(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", "sigs.k8s.io/metrics-server@v0.8.0")
	cmd.Dir = t.TempDir() // outside this module: a plain download
	out, err := cmd.Output()
	var mod struct{ Dir string }
	if err == nil {
		err = json.Unmarshal(out, &mod)
	}
	dir := filepath.Join(mod.Dir, "charts", "metrics-server")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "Chart.yaml"))
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no metrics-server chart (go mod download sigs.k8s.io/metrics-server@v0.8.0): %v", err)
		}
		t.Skipf("no metrics-server chart (go mod download sigs.k8s.io/metrics-server@v0.8.0): %v", err)
	}
	return dir
}

// TestHelmInstallMetricsServer: `helm install` of the metrics-server
// chart through a follower is accepted whole (APIService
// v1beta1.metrics.k8s.io, its RBAC with the RoleBinding to
// extension-apiserver-authentication-reader, Service, Deployment); the
// leader marks the APIService unavailable while no pod serves it (no
// nodes here), and proxying its group answers 503; uninstall removes it.
func TestHelmInstallMetricsServer(t *testing.T) {
	chart := metricsServerChart(t)
	h := newHelm(t)
	c := membertest.StartCluster(t, 3)
	f := c.Follower()
	ctx := t.Context()
	h.run(c.Kubeconfig(f), "install", "ms", chart, "--namespace", "kube-system")

	cs := c.Clientset(f)
	rb, err := cs.RbacV1().RoleBindings("kube-system").Get(ctx, "ms-metrics-server-auth-reader", metav1.GetOptions{})
	if err != nil || rb.RoleRef.Name != "extension-apiserver-authentication-reader" {
		t.Fatalf("the auth-reader RoleBinding: %v %+v", err, rb)
	}
	if _, err := cs.RbacV1().Roles("kube-system").Get(ctx, rb.RoleRef.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("the Role it binds: %v", err)
	}
	if _, err := cs.AppsV1().Deployments("kube-system").Get(ctx, "ms-metrics-server", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	agg := aggregatorclient.NewForConfigOrDie(c.RESTConfig(f))
	membertest.Eventually(t, 30*time.Second, func() error {
		s, err := agg.ApiregistrationV1().APIServices().Get(ctx, "v1beta1.metrics.k8s.io", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if s.Spec.Service == nil || s.Spec.Service.Name != "ms-metrics-server" || s.Spec.Service.Namespace != "kube-system" {
			t.Fatalf("APIService spec %+v", s.Spec)
		}
		for _, cnd := range s.Status.Conditions {
			if cnd.Type == apiregv1.Available && cnd.Status == apiregv1.ConditionFalse && cnd.Reason == "MissingEndpoints" {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v, want Available False MissingEndpoints", s.Status.Conditions)
	})
	if _, err := cs.CoreV1().RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1/nodes").DoRaw(ctx); err == nil ||
		!strings.Contains(err.Error(), "unable to handle the request") {
		t.Errorf("metrics.k8s.io without a server: %v, want 503", err)
	}
	h.run(c.Kubeconfig(f), "uninstall", "ms", "--namespace", "kube-system")
	membertest.WaitGone(t, 10*time.Second, "APIService v1beta1.metrics.k8s.io", func(ctx context.Context) error {
		_, err := agg.ApiregistrationV1().APIServices().Get(ctx, "v1beta1.metrics.k8s.io", metav1.GetOptions{})
		return err
	})
}
