package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/litek8s/litek8s/bench/internal/report"
	"github.com/litek8s/litek8s/bench/internal/stats"
)

// bench is one api_load run: the cluster, its data set and the report.
// One goroutine drives it; scenarios start their own client goroutines
// and wait for them.
type bench struct {
	opts   options
	tmp    string
	stderr io.Writer
	log    *slog.Logger
	level  slog.LevelVar // of log; raised while members close (peers gone is no news then)
	rep    *report.Report

	cl       *cluster
	leader   *endpoint
	follower *endpoint // nil on a 1-member cluster
	static   *staticServer
	shape    shape // of the ConfigMaps written
	// nodeBin is the `node` binary the members run with -processes.
	nodeBin string
}

// clusterConfig is how the bench starts a cluster of n members under
// tmp/dir.
func (b *bench) clusterConfig(dir string, n int) clusterConfig {
	return clusterConfig{dir: filepath.Join(b.tmp, dir), n: n, conns: b.opts.clients, timeout: b.opts.timeout,
		raftScale: b.opts.raftScale, simNodes: b.opts.simNodes, log: b.log,
		nodeBin: b.nodeBin, logLevel: b.opts.logLevel, stderr: b.stderr}
}

// run sets up the cluster and its data, runs the scenarios, and closes
// everything it started, whatever happens.
func (b *bench) run(ctx context.Context, sel []scenario) (err error) {
	if b.opts.processes {
		fmt.Fprintln(b.stderr, "building cmd/node")
		if b.nodeBin, err = buildNode(ctx, b.tmp, b.stderr); err != nil {
			return err
		}
	}
	fmt.Fprintf(b.stderr, "starting %d members under %s\n", b.opts.members, b.tmp)
	if b.cl, err = startCluster(ctx, b.clusterConfig("cluster", b.opts.members)); err != nil {
		return err
	}
	defer func() {
		if b.static != nil {
			err = errors.Join(err, b.static.Close())
		}
		b.level.Set(slog.LevelError + 100)
		err = errors.Join(err, b.cl.Close())
	}()
	if err := b.refresh(ctx); err != nil {
		return err
	}
	if err := createNamespaces(ctx, b.leader, listNS, writeNS); err != nil {
		return err
	}
	if err := b.fill(ctx, needsStatic(sel)); err != nil {
		return err
	}
	stopProfile, err := startProfile(b.opts.cpuprofile)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stopProfile()) }()
	if err := b.scenarios(ctx, sel); err != nil {
		return err
	}
	if err := stopProfile(); err != nil {
		return err
	}
	stopProfile = func() error { return nil }
	if err := b.measureMemory(ctx, "end"); err != nil {
		return err
	}
	if b.rep.ControllerResyncs, err = b.cl.members.resyncs(ctx); err != nil {
		return err
	}
	if err := b.runOps(ctx, b.opts.ops); err != nil {
		return err
	}
	return b.refresh(ctx)
}

// measureMemory records the members' memory: with -processes each
// member's (report.MemberMemory), in process the Go live heap of this
// process, which holds every member and the load clients.
func (b *bench) measureMemory(ctx context.Context, when string) error {
	ps, ok := b.cl.members.(*nodeProcs)
	if !ok {
		live, mapped := heapLive()
		if b.rep.Memory == nil {
			b.rep.Memory = &report.Memory{Members: b.opts.members, HeapLiveAfterFill: live}
		} else {
			b.rep.Memory.HeapLiveAtEnd, b.rep.Memory.GoMappedAtEnd = live, mapped
		}
		return nil
	}
	ms, err := ps.memory(ctx, when)
	if err != nil {
		return fmt.Errorf("memory %s: %w", when, err)
	}
	for _, m := range ms {
		fmt.Fprintf(b.stderr, "memory %s: member %s VmRSS %.1f MiB, heap live %.1f MiB\n", when, m.Member, mib(m.VmRSS), mib(m.HeapLive))
	}
	b.rep.MemberMemory = append(b.rep.MemberMemory, ms...)
	if when == "after fill" && b.opts.heapProfiles != "" {
		paths, err := ps.saveHeapProfiles(ctx, b.opts.heapProfiles)
		if err != nil {
			return fmt.Errorf("heap profiles: %w", err)
		}
		fmt.Fprintf(b.stderr, "heap profiles: %s\n", strings.Join(paths, " "))
	}
	return nil
}

// leaderNow, followerNow and staticEP are the endpoints as of the last
// refresh.
func (b *bench) leaderNow() *endpoint   { return b.leader }
func (b *bench) followerNow() *endpoint { return b.follower }
func (b *bench) staticEP() *endpoint    { return b.static.ep }

// refresh waits until every member is ready and finds the leader and a
// follower again; a leader that moved is reported: figures measured
// across an election are not comparable.
func (b *bench) refresh(ctx context.Context) error {
	err := poll(ctx, 30*time.Second, func() error {
		for _, ep := range b.cl.eps {
			if err := ep.do(ctx, call{method: http.MethodGet, path: "/readyz"}, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("members not ready: %w", err)
	}
	l, err := b.cl.leaderEP(ctx)
	if err != nil {
		return err
	}
	if b.leader != nil && l != b.leader {
		w := fmt.Sprintf("the leader moved from %s to %s (an election under load: the scenarios before this line measured it)", b.leader.name, l.name)
		fmt.Fprintln(b.stderr, "WARNING:", w)
		b.rep.Warnings = append(b.rep.Warnings, w)
	}
	b.leader = l
	b.follower, _, err = b.cl.followerEP(ctx)
	return err
}

// fill creates the list objects, records the data set and the memory,
// and, when staticSelected, fetches the list responses for the static
// server.
func (b *bench) fill(ctx context.Context, staticSelected bool) error {
	s, size, err := calibrate(ctx, b.leader)
	if err != nil {
		return err
	}
	b.shape = s
	fmt.Fprintf(b.stderr, "creating %d ConfigMaps of %d bytes (a %d-byte payload) with %d clients\n",
		b.opts.objects, size, len(s.payload), b.opts.clients)
	took, err := fill(ctx, b.leader, s, b.opts.objects, b.opts.clients, b.stderr)
	if err != nil {
		return err
	}
	b.rep.Fill = &report.Fill{Objects: b.opts.objects, Seconds: took.Seconds(),
		OpsPerSec: float64(b.opts.objects) / took.Seconds(), ObjectBytes: size,
		StoredBytes: int64(size) * int64(b.opts.objects)}
	fmt.Fprintf(b.stderr, "filled in %v (%s creates/s)\n", took.Round(time.Millisecond), report.FormatOps(b.rep.Fill.OpsPerSec))
	// before the static server's copies of the lists exist
	if err := b.measureMemory(ctx, "after fill"); err != nil {
		return err
	}
	if !staticSelected {
		return nil
	}
	list, sel, items, err := fetchListBodies(ctx, b)
	if err != nil {
		return err
	}
	f := b.rep.Fill
	f.ListItemBytes, f.ListBytes, f.SelectorBytes = items, len(list), len(sel)
	fmt.Fprintf(b.stderr, "list_all is %d bytes\n", len(list))
	b.static, err = startStatic(list, sel, b.cl.token, b.opts.clients, b.opts.timeout)
	return err
}

// needsStatic reports whether a scenario of sel reads the static server,
// whose copies of the list responses the bench then holds (70 MB per
// 100,000 objects).
func needsStatic(sel []scenario) bool {
	return slices.ContainsFunc(sel, func(s scenario) bool { return s.name == "static" || s.name == "static_selector" })
}

// active is a selected scenario: prepared, or skipped.
type active struct {
	s       scenario
	members int
	p       *prepared
	skipped string
	runs    []report.Run
}

// scenarios prepares every selected scenario, then runs them round-robin
// in runOrder: run 1 of each, run 2 of each, and so on, so that a change of
// load on the machine during the minutes of a run spreads over every
// scenario instead of biasing the ones that ran at that moment (the
// targets are ratios of scenarios). A scenario's warm-up comes before its
// first run.
func (b *bench) scenarios(ctx context.Context, sel []scenario) error {
	var as []*active
	defer func() {
		for _, a := range as {
			if a.p != nil && a.p.close != nil {
				a.p.close()
			}
		}
	}()
	for _, s := range sel {
		a := &active{s: s, members: b.opts.members}
		if s.name == "create_1member" {
			a.members = 1
		}
		as = append(as, a)
		if s.skip != nil {
			if a.skipped = s.skip(b); a.skipped != "" {
				fmt.Fprintf(b.stderr, "%-16s skipped: %s\n", s.name, a.skipped)
				continue
			}
		}
		if err := b.refresh(ctx); err != nil {
			return err
		}
		var err error
		if a.p, err = s.prepare(ctx, b); err != nil {
			return fmt.Errorf("%s: prepare: %w", s.name, err)
		}
	}
	order := slices.Clone(as)
	slices.SortStableFunc(order, func(x, y *active) int { return runIndex(x.s.name) - runIndex(y.s.name) })
	for r := 1; r <= b.opts.runs; r++ {
		for _, a := range order {
			if a.p == nil {
				continue
			}
			if err := b.runOnce(ctx, a, r); err != nil {
				return fmt.Errorf("%s: %w", a.s.name, err)
			}
		}
	}
	for _, a := range as {
		if a.p == nil {
			b.rep.Scenarios = append(b.rep.Scenarios, report.Scenario{Name: a.s.name, Members: a.members, Skipped: a.skipped})
			continue
		}
		b.rep.Scenarios = append(b.rep.Scenarios, report.NewScenario(a.s.name, a.members, a.runs))
	}
	return nil
}

// runOrder is the order in which a round runs the scenarios: the two
// sides of each target's ratio back to back, so that both see the same
// load on the machine. The tables keep the order of issue 4.
var runOrder = []string{"get", "create", "create_1member", "patch", "update",
	"list_all", "static", "follower_list", "list_selector", "static_selector", "list_table",
	"list_paged", "watch_latency", "watch_fanout", "schedule"}

func runIndex(name string) int {
	if i := slices.Index(runOrder, name); i >= 0 {
		return i
	}
	return len(runOrder)
}

// runOnce runs a's run r (after its warm-up when r is 1).
func (b *bench) runOnce(ctx context.Context, a *active, r int) error {
	if err := b.refresh(ctx); err != nil {
		return err
	}
	if r == 1 && a.p.warmup && b.opts.warmup > 0 {
		if _, _, err := a.p.run(ctx, "w", b.opts.warmup); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	lats, elapsed, err := a.p.run(ctx, fmt.Sprintf("r%d", r), b.opts.duration)
	if se := (*statusError)(nil); errors.As(err, &se) && se.code == http.StatusServiceUnavailable {
		err = fmt.Errorf("%w\n(an election during the run: a leader that cannot reach a quorum within its lease steps down; see the raft warnings above and the load average)", err)
	}
	if err != nil {
		return fmt.Errorf("run %d: %w", r, err)
	}
	if len(lats) == 0 {
		return fmt.Errorf("run %d: no operation completed in %v", r, b.opts.duration)
	}
	sum := stats.Summarize(lats, elapsed)
	fmt.Fprintf(b.stderr, "%-16s run %d/%d: %8s ops/s  p50 %6s ms  p90 %6s ms  p99 %6s ms  (%d ops)\n", a.s.name, r, b.opts.runs,
		report.FormatOps(sum.OpsPerSec), report.FormatMs(ms(sum.P50)), report.FormatMs(ms(sum.P90)), report.FormatMs(ms(sum.P99)), sum.Ops)
	a.runs = append(a.runs, report.RunOf(sum))
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
