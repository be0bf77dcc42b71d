package controllers

import (
	"context"
	"log/slog"
	"sync"

	"k8s.io/client-go/dynamic"
)

// Manager runs the controllers while this member leads.
type Manager struct {
	opts  Options
	log   *slog.Logger
	stats counters
	// gcClient is the garbage collector's API client (stateless, shared
	// by every term).
	gcClient dynamic.Interface
}

// New builds a Manager; Run runs it.
func New(opts Options) (*Manager, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	m := &Manager{opts: opts, log: opts.Logger.With("component", "controllers")}
	var err error
	if m.gcClient, err = newDynamicClient(opts.Config, opts.API, opts.Token, gcName); err != nil {
		return nil, err
	}
	return m, nil
}

// Run runs the controllers in every term this member leads, until ctx
// ends; it returns once they have stopped. The caller owns the goroutine.
func (m *Manager) Run(ctx context.Context) {
	m.opts.Leadership.RunAsLeader(ctx, m.lead)
}

// Stats returns the counters so far.
func (m *Manager) Stats() Stats { return m.stats.snapshot() }

// lead runs one term: every controller, from a fresh state, until ctx
// (the term) ends, and waits for all of them.
func (m *Manager) lead(ctx context.Context) {
	m.stats.terms.Add(1)
	m.log.Info("leading: controllers started")
	runs := []func(context.Context){
		newGC(m.opts, m.gcClient, &m.stats, m.log).run,
	}
	var wg sync.WaitGroup
	for _, run := range runs {
		wg.Go(func() { run(ctx) })
	}
	wg.Wait()
	m.log.Info("controllers stopped")
}
