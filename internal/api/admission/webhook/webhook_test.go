package webhook

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/litek8s/litek8s/internal/kv"
)

// noServices is a svcclient.Reader with nothing in it (a unit test's fake).
type noServices struct{}

func (noServices) Get(context.Context, kv.Key, bool) (*kv.Object, uint64, error) {
	return nil, 0, kv.ErrNotFound
}

func (noServices) List(context.Context, string, string, bool) (*kv.List, error) {
	return &kv.List{}, nil
}

// TestCloseTwice: a member may be closed twice (a test's Close and its
// cleanup); the second Close must not close the stop channel again, and
// Start after Close starts nothing.
func TestCloseTwice(t *testing.T) {
	w, err := New(Config{Client: fake.NewClientset(), Services: noServices{}})
	if err != nil {
		t.Fatal(err)
	}
	w.Start()
	w.Close()
	w.Close()
	w.Start()
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		t.Fatal("Close did not mark the webhooks closed")
	}
}

// TestCloseEndsTheWaitForInformers: kube's plugins wait up to 10 s for
// their informers before each request, whatever the request's context; a
// write made while they had not listed yet kept a closing member waiting
// that long. Close ends the wait, and the request is refused (503), not
// admitted without its webhooks.
func TestCloseEndsTheWaitForInformers(t *testing.T) {
	w, err := New(Config{Client: fake.NewClientset(), Services: noServices{}})
	if err != nil {
		t.Fatal(err)
	}
	// Not started: the informers never list.
	attrs := kadmission.NewAttributesRecord(&corev1.ConfigMap{}, nil, corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		"ns", "cm", corev1.SchemeGroupVersion.WithResource("configmaps"), "", kadmission.Create,
		&metav1.CreateOptions{}, false, &user.DefaultInfo{Name: "alice"})
	errs := make(chan error, 2)
	go func() { errs <- w.Mutating().(kadmission.MutationInterface).Admit(t.Context(), attrs, nil) }()
	go func() { errs <- w.Validating().(kadmission.ValidationInterface).Validate(t.Context(), attrs, nil) }()
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-errs:
		t.Fatalf("a request returned before the informers listed or Close: %v", err)
	default:
	}
	start := time.Now()
	w.Close()
	for range 2 {
		select {
		case err := <-errs:
			if !apierrors.IsServiceUnavailable(err) {
				t.Errorf("after Close: %v, want 503 ServiceUnavailable", err)
			}
		case <-time.After(3 * time.Second):
			t.Fatal("a request still waits for the informers 3 s after Close")
		}
	}
	t.Logf("both requests refused %v after Close", time.Since(start))
}
