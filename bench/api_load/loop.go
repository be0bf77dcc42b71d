package main

import (
	"context"
	"fmt"
	"runtime/pprof"
	"sync"
	"time"
)

// op is one operation of one client; a client goroutine calls it again
// and again.
type op func(ctx context.Context) error

// group runs goroutines that stop at the first error, like errgroup (not a
// direct dependency in go.mod): the first error cancels the group's
// context and is the one Wait returns.
type group struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
	once   sync.Once
	err    error
}

func newGroup(ctx context.Context) *group {
	g := &group{}
	g.ctx, g.cancel = context.WithCancelCause(ctx)
	return g
}

// Go runs f in a goroutine labelled side=client for CPU profiles, so that
// `go tool pprof -tagignore side=client` shows the servers alone.
func (g *group) Go(f func(ctx context.Context) error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		pprof.Do(g.ctx, pprof.Labels("side", "client"), func(ctx context.Context) {
			if err := f(ctx); err != nil {
				g.fail(err)
			}
		})
	}()
}

func (g *group) fail(err error) {
	g.once.Do(func() {
		g.err = err
		g.cancel(err)
	})
}

// Wait waits for every goroutine and returns the first error; if the
// parent context ended first, its cause.
func (g *group) Wait() error {
	g.wg.Wait()
	g.cancel(nil)
	return g.err
}

// closedLoop runs len(ops) clients, each calling its op back to back for d,
// and returns every op's latency and the time from the start until the
// last op in flight at d finished. The first failed op fails the run.
func closedLoop(ctx context.Context, ops []op, d time.Duration) ([]time.Duration, time.Duration, error) {
	lats := make([][]time.Duration, len(ops))
	g := newGroup(ctx)
	start := time.Now()
	deadline := start.Add(d)
	for i, o := range ops {
		lats[i] = make([]time.Duration, 0, 1024)
		g.Go(func(ctx context.Context) error {
			for {
				t0 := time.Now()
				if !t0.Before(deadline) {
					return nil
				}
				if err := o(ctx); err != nil {
					if ctx.Err() != nil && context.Cause(ctx) != nil {
						return context.Cause(ctx)
					}
					return fmt.Errorf("client %d: %w", i, err)
				}
				lats[i] = append(lats[i], time.Since(t0))
			}
		})
	}
	err := g.Wait()
	elapsed := time.Since(start)
	if err != nil {
		return nil, 0, err
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	return all, elapsed, nil
}
