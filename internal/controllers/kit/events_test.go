package kit_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/litek8s/litek8s/internal/controllers/kit"
	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// TestRecorderAggregatesAndStops: repeats of one event become one Event
// whose count grows, another reason is another Event, and Shutdown
// returns once the term ended with nothing left running (StartCluster
// checks the goroutines).
func TestRecorderAggregatesAndStops(t *testing.T) {
	c := membertest.StartCluster(t, 1, func(cfg *member.Config) {
		cfg.Controllers.Disabled = []string{"namespace", "endpoint", "endpointslice"} // quiet
	})
	cs := c.Clientset(0)
	cm, err := cs.CoreV1().ConfigMaps("default").Create(t.Context(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ev"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, end := context.WithCancel(t.Context())
	kc := kit.NewContext(ctx, c.Member(0).Store(), new(atomic.Uint64), nil, func(string) *rest.Config { return c.RESTConfig(0) },
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	rec := kc.Recorder("test-controller")
	for range 3 {
		rec.Eventf(cm, corev1.EventTypeNormal, "Poked", "poked %s", cm.Name)
	}
	rec.Event(cm, corev1.EventTypeWarning, "Other", "something else")
	membertest.Eventually(t, 10*time.Second, func() error {
		l, err := cs.CoreV1().Events("default").List(t.Context(), metav1.ListOptions{FieldSelector: "involvedObject.name=ev"})
		if err != nil {
			return err
		}
		counts := map[string]int32{}
		for _, e := range l.Items {
			if e.Source.Component != "test-controller" || e.InvolvedObject.UID != cm.UID {
				t.Errorf("event %+v", e)
			}
			counts[e.Reason] += e.Count
			if e.Reason == "Poked" && e.Message != "poked ev" {
				t.Errorf("message %q", e.Message)
			}
		}
		if len(l.Items) != 2 || counts["Poked"] != 3 || counts["Other"] != 1 {
			return fmt.Errorf("events %d, counts %v; want 2 events, Poked 3 and Other 1", len(l.Items), counts)
		}
		return nil
	})
	end()
	done := make(chan struct{})
	go func() { kc.Shutdown(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return after the term ended")
	}
}
