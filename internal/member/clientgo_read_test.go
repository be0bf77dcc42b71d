package member_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// restConfig is member i's client configuration (see start).
func restConfig(t *testing.T, c *membertest.Cluster, i int) *rest.Config {
	t.Helper()
	return &rest.Config{Host: c.Member(i).URL(), BearerToken: c.Token(), Transport: c.Transport(i),
		QPS: 1000, Burst: 1000, Timeout: 20 * time.Second}
}

// client-go with protobuf: the controllers' default ("protobuf, */*") is
// answered in JSON, which client-go decodes; a client that accepts
// protobuf only gets protobuf for get, list and watch. Requests go to a
// follower.
func TestClientGoProtobuf(t *testing.T) {
	c := membertest.StartCluster(t, 3, membertest.FastRaft)
	ctx := t.Context()
	f := c.Follower()
	for _, accept := range []string{"", "application/vnd.kubernetes.protobuf"} {
		t.Run("accept="+accept, func(t *testing.T) {
			cfg := restConfig(t, c, f)
			cfg.ContentType, cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf", accept
			var mu sync.Mutex
			answered := map[string]bool{} // "GET <Content-Type>"
			cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
				return roundTripFunc(func(r *http.Request) (*http.Response, error) {
					resp, err := rt.RoundTrip(r)
					if err == nil && r.Method == http.MethodGet {
						mu.Lock()
						answered[resp.Header.Get("Content-Type")] = true
						mu.Unlock()
					}
					return resp, err
				})
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			cms := cs.CoreV1().ConfigMaps("default")
			name := "pb" + fmt.Sprint(len(accept))
			created, err := cms.Create(ctx, configMap(name, map[string]string{"k": "v"}), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: created.ResourceVersion, AllowWatchBookmarks: true,
				FieldSelector: "metadata.name=" + name})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			got, err := cms.Get(ctx, name, metav1.GetOptions{})
			if err != nil || got.Data["k"] != "v" || got.ResourceVersion != created.ResourceVersion {
				t.Fatalf("get: %v %+v", err, got)
			}
			l, err := cms.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
			if err != nil || len(l.Items) != 1 || l.Items[0].Name != name {
				t.Fatalf("list: %v %+v", err, l)
			}
			got.Data["k"] = "w"
			if _, err := cms.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			select {
			case ev := <-w.ResultChan():
				cm, ok := ev.Object.(*corev1.ConfigMap)
				if ev.Type != watch.Modified || !ok || cm.Data["k"] != "w" {
					t.Fatalf("watch event %s %#v", ev.Type, ev.Object)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no watch event")
			}
			mu.Lock()
			defer mu.Unlock()
			want := []string{"application/json"}
			if accept != "" {
				want = []string{"application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf;stream=watch"}
			}
			if got := slices.Sorted(maps.Keys(answered)); !slices.Equal(got, want) {
				t.Errorf("GETs answered in %v, want %v", got, want)
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// client-go's metadata client (metadata-only informers, the garbage
// collector's way) lists, gets and watches PartialObjectMetadata.
func TestClientGoMetadata(t *testing.T) {
	c := membertest.StartCluster(t, 1, membertest.FastRaft)
	ctx := t.Context()
	mc, err := metadata.NewForConfig(restConfig(t, c, 0))
	if err != nil {
		t.Fatal(err)
	}
	cms := mc.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default")
	created, err := c.PlainClientset(0).CoreV1().ConfigMaps("default").Create(ctx,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "meta", Labels: map[string]string{"a": "b"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "a=b"})
	if err != nil || len(l.Items) != 1 || l.Items[0].Name != "meta" || l.Items[0].UID != created.UID || l.ResourceVersion == "" {
		t.Fatalf("metadata list: %v %+v", err, l)
	}
	got, err := cms.Get(ctx, "meta", metav1.GetOptions{})
	if err != nil || got.Labels["a"] != "b" || got.UID != created.UID {
		t.Fatalf("metadata get: %v %+v", err, got)
	}
	// Only this test's object: the root-ca-cert-publisher may create
	// kube-root-ca.crt in default at any time after the cluster starts.
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion, FieldSelector: "metadata.name=meta"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := c.PlainClientset(0).CoreV1().ConfigMaps("default").Delete(ctx, "meta", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		pom, ok := ev.Object.(*metav1.PartialObjectMetadata)
		if ev.Type != watch.Deleted || !ok || pom.Name != "meta" {
			t.Fatalf("metadata watch event %s %#v", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no metadata watch event")
	}
}

// kubectl against a member: --field-selector, -o yaml, -o wide, explain
// from OpenAPI v2.
func TestKubectlReads(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl not on PATH")
	}
	c := membertest.StartCluster(t, 1, membertest.FastRaft)
	ctx := t.Context()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bound"},
		Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	if _, err := c.PlainClientset(0).CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod.Name, pod.Spec.NodeName = "unbound", ""
	if _, err := c.PlainClientset(0).CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kubectl := func(args ...string) (string, error) {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(cctx, "kubectl", append([]string{"--kubeconfig", c.Member(0).Kubeconfig(),
			"--cache-dir", filepath.Join(dir, "cache")}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+dir)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, tc := range []struct {
		args      []string
		want      []string
		wantNot   []string
		wantError bool
	}{
		{args: []string{"get", "pods", "--field-selector", "spec.nodeName=node-a"}, want: []string{"bound"}, wantNot: []string{"unbound"}},
		{args: []string{"get", "pods", "--field-selector", "spec.nodeName=node-a", "-o", "name"}, want: []string{"pod/bound"}},
		{args: []string{"get", "pods", "-o", "wide"}, want: []string{"NOMINATED NODE", "READINESS GATES", "node-a", "<none>"}},
		{args: []string{"get", "pod", "bound", "-o", "yaml"}, want: []string{"apiVersion: v1", "kind: Pod", "nodeName: node-a"}},
		{args: []string{"explain", "pods.spec.nodeName", "--output=plaintext-openapiv2"}, want: []string{"FIELD:    nodeName <string>"}},
		{args: []string{"get", "pods", "--field-selector", "spec.foo=bar"}, wantError: true,
			want: []string{"field label not supported: spec.foo"}},
	} {
		out, err := kubectl(tc.args...)
		if (err != nil) != tc.wantError {
			t.Errorf("kubectl %s: %v\n%s", strings.Join(tc.args, " "), err, out)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("kubectl %s: no %q in\n%s", strings.Join(tc.args, " "), w, out)
			}
		}
		for _, w := range tc.wantNot {
			if strings.Contains(out, w) {
				t.Errorf("kubectl %s: %q in\n%s", strings.Join(tc.args, " "), w, out)
			}
		}
	}
}
