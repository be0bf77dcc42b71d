package controllers

import (
	"context"
	"log/slog"
	"slices"
	"sync"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Manager runs the controllers while this member leads.
type Manager struct {
	opts    Options
	log     *slog.Logger
	stats   counters
	metrics *metrics
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
	m.metrics = newMetrics(opts.Metrics, &m.stats)
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
	m.metrics.setLeading(true)
	m.log.Info("leading: controllers started")
	kc := kit.NewContext(ctx, m.opts.Store, &m.stats.resyncs, m.metrics.queues, m.restConfig, m.log)
	var typed, disabled []kit.Controller
	all := append(workloads(kc, m.opts.Config), scheduling(kc, m.opts.Config, m.metrics.scheduler)...)
	all = append(all, certificates(kc, m.opts.Config, m.opts.RootCA, m.opts.CAKey, m.log)...)
	all = append(all, storage(kc, m.opts.Config)...)
	all = append(all, policy(kc, m.opts.Config)...)
	all = append(all, aggregation(kc, m.opts.Config, m.opts.APIServices, m.restConfig)...)
	for _, c := range append(all, cluster(kc, m.opts.Config, m.opts.Resources, m.opts.RootCA, m.restConfig, m.opts.Members)...) {
		if slices.Contains(m.opts.Config.Disabled, c.Name()) {
			disabled = append(disabled, c)
		} else {
			typed = append(typed, c)
		}
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	for _, c := range disabled {
		c.Run(done) // releases what its constructor started, does nothing
	}
	kc.Informers.Start(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { newGC(m.opts, m.gcClient, &m.stats, m.metrics.queues, m.log).run(ctx) })
	// WaitForSync fails only when the term ended: the controllers then run
	// with a done context, which only releases what their constructors
	// started (queues).
	kc.Informers.WaitForSync(ctx)
	for _, c := range typed {
		wg.Go(func() { c.Run(ctx) })
	}
	wg.Wait()
	kc.Shutdown()
	m.metrics.queues.Reset() // the term's queues are gone
	m.metrics.setLeading(false)
	m.log.Info("controllers stopped")
}

// restConfig is the in-process client configuration of controller.
func (m *Manager) restConfig(controller string) *rest.Config {
	return inProcessConfig(m.opts.Config, m.opts.API, m.opts.Token, controller)
}
