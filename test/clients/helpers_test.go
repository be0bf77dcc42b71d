package clients

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// requireServed fails the test at once, quoting discovery, when the
// member does not serve resource in groupVersion: the rest of the test
// would only fail in less obvious ways.
func requireServed(t *testing.T, d discovery.DiscoveryInterface, groupVersion, resource, feature string) {
	t.Helper()
	path := "/apis/" + groupVersion
	if !strings.Contains(groupVersion, "/") {
		path = "/api/" + groupVersion
	}
	l, err := d.ServerResourcesForGroupVersion(groupVersion)
	if err != nil {
		t.Fatalf("needs %s (issue 3): GET %s: %v", feature, path, err)
	}
	for _, r := range l.APIResources {
		if r.Name == resource {
			return
		}
	}
	t.Fatalf("needs %s (issue 3): GET %s does not list %q", feature, path, resource)
}

// createNamespace creates a namespace.
func createNamespace(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	_, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
}

// retryWrite retries a write while the cluster elects a leader or a member
// restarts. A create that finds the object (an earlier attempt succeeded
// without its answer arriving) and a delete that does not are done.
func retryWrite(t *testing.T, what string, f func(ctx context.Context) error) {
	t.Helper()
	membertest.Eventually(t, 20*time.Second, func() error {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		err := f(ctx)
		switch {
		case err == nil:
			return nil
		case strings.HasPrefix(what, "create") && apierrors.IsAlreadyExists(err):
			return nil
		case strings.HasPrefix(what, "delete") && apierrors.IsNotFound(err):
			return nil
		case apierrors.IsBadRequest(err) || apierrors.IsInvalid(err) || apierrors.IsForbidden(err):
			t.Fatalf("%s: %v", what, err) // not an availability problem
		}
		return fmt.Errorf("%s: %w", what, err)
	})
}

// requestLog records the requests a client sends (method, path?query) and
// the status of each answer, through rest.Config.WrapTransport.
type requestLog struct {
	mu   sync.Mutex // protects reqs
	reqs []loggedRequest
}

type loggedRequest struct {
	Method string
	URL    *url.URL
	Status int // 0 when the request failed without an answer
	At     time.Time
}

func (r loggedRequest) String() string {
	return fmt.Sprintf("%s %s → %d", r.Method, r.URL.RequestURI(), r.Status)
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		lr := loggedRequest{Method: req.Method, URL: req.URL, At: time.Now()}
		if err == nil {
			lr.Status = resp.StatusCode
		}
		l.mu.Lock()
		l.reqs = append(l.reqs, lr)
		l.mu.Unlock()
		return resp, err
	})
}

// matching returns the requests to paths ending in suffix, in order.
func (l *requestLog) matching(suffix string) []loggedRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []loggedRequest
	for _, r := range l.reqs {
		if strings.HasSuffix(r.URL.Path, suffix) {
			out = append(out, r)
		}
	}
	return out
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// isWatchList reports whether r is a streaming watch-list request as
// client-go 0.37 informers send it.
func isWatchList(r loggedRequest) bool {
	q := r.URL.Query()
	return r.Method == http.MethodGet && q.Get("watch") == "true" && q.Get("sendInitialEvents") == "true" &&
		q.Get("allowWatchBookmarks") == "true" && q.Get("resourceVersionMatch") == "NotOlderThan"
}

func isList(r loggedRequest) bool {
	return r.Method == http.MethodGet && r.URL.Query().Get("watch") == ""
}
