package membertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// WaitGone calls get until it answers 404 (NotFound), failing the test
// after d with what it last answered; what names the object.
func WaitGone(t testing.TB, d time.Duration, what string, get func(ctx context.Context) error) {
	t.Helper()
	Eventually(t, d, func() error {
		err := get(t.Context())
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		}
		return fmt.Errorf("%s still exists", what)
	})
}

// MustStay checks that get keeps finding the object for a second (the
// controllers had the time to act on it), failing the test at its first
// error.
func MustStay(t testing.TB, what string, get func(ctx context.Context) error) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		if err := get(t.Context()); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
