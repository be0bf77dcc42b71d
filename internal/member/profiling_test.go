package member_test

import (
	"bytes"
	"errors"
	"net/http"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// TestProfiling: with profiling on (the default, as on kube) the admin
// reads the heap profile and the goroutine dump under /debug/pprof/, a
// user RBAC does not allow the URL gets 403; with it off the path is 404.
func TestProfiling(t *testing.T) {
	t.Run("on", func(t *testing.T) {
		c := membertest.StartCluster(t, 1)
		admin := c.RESTConfig(0)
		raw, code := pprofGet(t, admin, "/debug/pprof/heap")
		if code != http.StatusOK || !bytes.Contains(raw, []byte("# runtime.MemStats")) {
			t.Fatalf("admin GET /debug/pprof/heap?debug=1: %d %.200q", code, raw)
		}
		if raw, code = pprofGet(t, admin, "/debug/pprof/goroutine"); code != http.StatusOK || !bytes.Contains(raw, []byte("goroutine profile:")) {
			t.Fatalf("admin GET /debug/pprof/goroutine?debug=1: %d %.200q", code, raw)
		}
		bob := rest.CopyConfig(admin)
		bob.Impersonate = rest.ImpersonationConfig{UserName: "bob", Groups: []string{"system:authenticated"}}
		if raw, code = pprofGet(t, bob, "/debug/pprof/heap"); code != http.StatusForbidden {
			t.Fatalf("bob GET /debug/pprof/heap: %d %.200q, want 403", code, raw)
		}
	})
	t.Run("off", func(t *testing.T) {
		c := membertest.StartCluster(t, 1, func(cfg *member.Config) { cfg.Profiling = false })
		if raw, code := pprofGet(t, c.RESTConfig(0), "/debug/pprof/heap"); code != http.StatusNotFound {
			t.Fatalf("profiling off: GET /debug/pprof/heap: %d %.200q, want 404", code, raw)
		}
	})
}

// pprofGet GETs path?debug=1 and returns the body and status code.
func pprofGet(t *testing.T, cfg *rest.Config, path string) ([]byte, int) {
	t.Helper()
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(cfg)
	var code int
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath(path).Param("debug", "1").Do(ctx).StatusCode(&code).Raw()
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		code = int(st.Status().Code)
	}
	if code == 0 {
		t.Fatalf("GET %s: %v", path, err)
	}
	return raw, code
}
