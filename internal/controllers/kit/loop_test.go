package kit

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
)

func TestLoopConfigValidate(t *testing.T) {
	if err := DefaultLoopConfig(1).Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, tt := range []struct {
		name  string
		mod   func(*LoopConfig)
		field string
	}{
		{"no workers", func(c *LoopConfig) { c.Workers = 0 }, "Workers"},
		{"no base", func(c *LoopConfig) { c.RetryBase = 0 }, "RetryBase"},
		{"max below base", func(c *LoopConfig) { c.RetryMax = c.RetryBase / 2 }, "RetryMax"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultLoopConfig(3)
			tt.mod(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("Validate() = %v, want an error naming %s", err, tt.field)
			}
		})
	}
}

func TestLoopConfigLimiter(t *testing.T) {
	c := LoopConfig{Workers: 1, RetryBase: time.Millisecond, RetryMax: 4 * time.Millisecond}
	l := c.Limiter()
	var got []time.Duration
	for range 4 {
		got = append(got, l.When("k"))
	}
	want := []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond, 4 * time.Millisecond}
	if !slices.Equal(got, want) {
		t.Fatalf("backoff %v, want %v", got, want)
	}
}

func TestRunWorkers(t *testing.T) {
	q := workqueue.NewTyped[string]()
	ctx, cancel := context.WithCancel(t.Context())
	var (
		mu     sync.Mutex
		seen   []string
		active int
		most   int
	)
	all := make(chan struct{})
	process := func(_ context.Context, key string) {
		mu.Lock()
		active++
		most = max(most, active)
		seen = append(seen, key)
		n := len(seen)
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		active--
		mu.Unlock()
		if n == 6 {
			close(all)
		}
	}
	for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
		q.Add(k)
	}
	done := make(chan struct{})
	go func() {
		RunWorkers(ctx, q, 2, process)
		close(done)
	}()
	select {
	case <-all:
	case <-time.After(10 * time.Second):
		t.Fatal("the workers did not process every key")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("RunWorkers did not return after its context ended")
	}
	if !q.ShuttingDown() {
		t.Error("the queue was not shut down")
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(seen)
	if !slices.Equal(seen, []string{"a", "b", "c", "d", "e", "f"}) || most > 2 || active != 0 {
		t.Errorf("seen %v, at most %d at once (want ≤ 2), %d still active", seen, most, active)
	}
}
