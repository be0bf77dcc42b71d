package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"

	"github.com/litek8s/litek8s/internal/kv"
)

// namespaceLister reads namespaces from the local store for kube's
// namespaceSelector matching and the `namespaceObject` CEL variable.
type namespaceLister struct{ st Store }

var _ corelisters.NamespaceLister = namespaceLister{}

var namespacesResource = corev1.Resource("namespaces")

func (l namespaceLister) List(sel labels.Selector) ([]*corev1.Namespace, error) {
	list, err := l.st.List(context.Background(), "namespaces", "", false)
	if err != nil {
		return nil, fmt.Errorf("policy: list namespaces: %w", err)
	}
	var out []*corev1.Namespace
	list.Range("", func(o *kv.Object) bool {
		if !sel.Matches(&o.Labels) {
			return true
		}
		ns := &corev1.Namespace{}
		if err = json.Unmarshal(o.Raw, ns); err != nil {
			return false
		}
		out = append(out, ns)
		return true
	})
	return out, err
}

func (l namespaceLister) Get(name string) (*corev1.Namespace, error) {
	return getNamespace(context.Background(), l.st, name, false)
}

func getNamespace(ctx context.Context, st Store, name string, consistent bool) (*corev1.Namespace, error) {
	o, _, err := st.Get(ctx, kv.Key{Resource: "namespaces", Name: name}, consistent)
	if errors.Is(err, kv.ErrNotFound) {
		return nil, apierrors.NewNotFound(namespacesResource, name)
	}
	if err != nil {
		return nil, fmt.Errorf("policy: get namespace %q: %w", name, err)
	}
	ns := &corev1.Namespace{}
	if err := json.Unmarshal(o.Raw, ns); err != nil {
		return nil, fmt.Errorf("policy: decode namespace %q: %w", name, err)
	}
	return ns, nil
}

// namespaceClient is the client kube's namespace matcher falls back to
// when its lister misses a namespace ("in case of latency in our
// caches"): a client-go clientset whose transport answers GET
// /api/v1/namespaces/{name} with a consistent read of the store.
func namespaceClient(st Store) (kubernetes.Interface, error) {
	hc := &http.Client{Transport: namespaceTransport{st: st}}
	return kubernetes.NewForConfigAndClient(&rest.Config{Host: "http://local-store.invalid"}, hc)
}

type namespaceTransport struct{ st Store }

func (t namespaceTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	name, ok := strings.CutPrefix(r.URL.Path, "/api/v1/namespaces/")
	if !ok || r.Method != http.MethodGet || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("policy: the namespace client serves only GET /api/v1/namespaces/{name}, not %s %s", r.Method, r.URL.Path)
	}
	var (
		body any
		code = http.StatusOK
	)
	ns, err := getNamespace(r.Context(), t.st, name, true)
	switch se := (*apierrors.StatusError)(nil); {
	case err == nil:
		ns.APIVersion, ns.Kind = "v1", "Namespace"
		body = ns
	case errors.As(err, &se):
		st := se.Status()
		st.APIVersion, st.Kind = "v1", "Status"
		body, code = &st, int(st.Code)
	default:
		return nil, err
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return &http.Response{StatusCode: code, Header: http.Header{"Content-Type": []string{"application/json"}},
		Body: io.NopCloser(bytes.NewReader(raw)), ContentLength: int64(len(raw)), Request: r}, nil
}
