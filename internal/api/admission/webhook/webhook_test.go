package webhook

import (
	"context"
	"testing"

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
