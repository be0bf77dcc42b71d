package controllers

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The in-process client reaches the handler with the token and the
// controller's User-Agent, and gets its answer back; it refuses watches
// and survives a handler's panic.
func TestInProcessClient(t *testing.T) {
	var got *http.Request
	var body string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		b, _ := io.ReadAll(r.Body)
		body = string(b)
		if r.URL.Query().Get("labelSelector") == "panic" {
			panic("boom")
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"ns","resourceVersion":"7"}}`)
	})
	c, err := newDynamicClient(DefaultConfig(), h, "tok", gcName)
	if err != nil {
		t.Fatal(err)
	}
	u, err := c.Resource(cmGVR).Namespace("ns").Patch(t.Context(), "x", types.MergePatchType, []byte(`{"a":1}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u.GetResourceVersion() != "7" {
		t.Errorf("answer %v", u.Object)
	}
	if got.Method != http.MethodPatch || got.URL.Path != "/api/v1/namespaces/ns/configmaps/x" || body != `{"a":1}` ||
		got.Header.Get("Authorization") != "Bearer tok" || got.Header.Get("Content-Type") != "application/merge-patch+json" {
		t.Errorf("request %s %s %q %v", got.Method, got.URL, body, got.Header)
	}
	if ua := got.UserAgent(); !strings.HasPrefix(ua, "kube-controller-manager/v1.37.2-litek8s (") ||
		!strings.HasSuffix(ua, ") litek8s/generic-garbage-collector") {
		t.Errorf("User-Agent %q", ua)
	}
	if _, err := c.Resource(cmGVR).Namespace("ns").Watch(t.Context(), metav1.ListOptions{}); !errors.Is(err, ErrWatch) {
		t.Errorf("watch: %v, want ErrWatch", err)
	}
	_, err = c.Resource(cmGVR).Namespace("ns").List(t.Context(), metav1.ListOptions{LabelSelector: "panic"})
	if err == nil {
		t.Error("no error from a panicking handler")
	}
}
