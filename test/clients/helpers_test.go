package clients

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
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

// skipUnlessServed skips the test when the member does not serve resource
// in groupVersion, quoting the discovery answer.
func skipUnlessServed(t *testing.T, d discovery.DiscoveryInterface, groupVersion, resource, feature string) {
	t.Helper()
	path := "/apis/" + groupVersion
	if !strings.Contains(groupVersion, "/") {
		path = "/api/" + groupVersion
	}
	l, err := d.ServerResourcesForGroupVersion(groupVersion)
	if err != nil {
		if apierrors.IsNotFound(err) {
			t.Skipf("needs %s (issue 3): GET %s answers 404 NotFound (%v)", feature, path, err)
		}
		t.Fatalf("discovery of %s: %v", groupVersion, err)
	}
	for _, r := range l.APIResources {
		if r.Name == resource {
			return
		}
	}
	t.Skipf("needs %s (issue 3): GET %s does not list %q", feature, path, resource)
}

// createNamespace creates a namespace.
func createNamespace(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	retryWrite(t, "create namespace "+name, func(ctx context.Context) error {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		return err
	})
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

var errNotYet = errors.New("not yet")

// gaps collects differences from kube that a server feature still to come
// explains, so that a long scenario keeps checking everything else and
// then skips, naming each gap, instead of failing. Any real failure
// reported meanwhile still fails the test.
type gaps struct {
	mu   sync.Mutex // protects list
	list []string
}

func (g *gaps) add(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	t.Logf("known gap: %s", msg)
	g.mu.Lock()
	defer g.mu.Unlock()
	if !slices.Contains(g.list, msg) {
		g.list = append(g.list, msg)
	}
}

func (g *gaps) skipIfAny(t *testing.T) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.list) > 0 {
		t.Skipf("needs (issue 3):\n%s", strings.Join(g.list, "\n"))
	}
}
