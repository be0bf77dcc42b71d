package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/litek8s/litek8s/bench/internal/report"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	interrupted := ctx.Err() != nil
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		if interrupted {
			fmt.Fprintln(os.Stderr, "api_load: interrupted:", err)
		} else {
			fmt.Fprintln(os.Stderr, "api_load: FAILED:", err)
		}
		os.Exit(1)
	}
}

// options are the flags.
type options struct {
	members, clients, objects, runs, watchers int
	raftScale, simNodes, scheduleReplicas     int
	duration, warmup, idleWait, timeout       time.Duration
	scenario, cpuprofile, jsonOut, verify     string
	logLevel, note, heapProfiles, opsFlag     string
	ops                                       []string // parsed -ops
	compareSingle, idleRSS, markdown          bool
	processes                                 bool
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("api_load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.members, "members", 3, "cluster size: 1 or 3 members")
	fs.IntVar(&o.clients, "clients", 32, "concurrent clients (one keep-alive connection each)")
	fs.IntVar(&o.objects, "objects", 1000, "ConfigMaps of ~700 bytes the list scenarios read (filled first)")
	fs.IntVar(&o.runs, "runs", 3, "runs of each scenario; each figure is the median over the runs")
	fs.DurationVar(&o.duration, "duration", 5*time.Second, "length of one run")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "untimed run before the first run of a scenario (0: none)")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "a request taking longer fails the run")
	fs.IntVar(&o.watchers, "watchers", 1000, "watches held by watch_fanout, spread over the members")
	fs.IntVar(&o.simNodes, "simulated-nodes", 10, "simulated nodes the leader runs (the schedule scenario binds to them)")
	fs.IntVar(&o.scheduleReplicas, "schedule-replicas", 100, "replicas of the schedule scenario's Deployment")
	fs.StringVar(&o.scenario, "scenario", "all", "scenarios to run, separated by commas, or all: "+strings.Join(scenarioNames(), ", "))
	fs.BoolVar(&o.compareSingle, "compare-single", false, "also run create on a second, 1-member cluster (create_1member, target 5)")
	fs.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of the scenario runs (servers and clients; clients carry the label side=client)")
	fs.StringVar(&o.jsonOut, "json", "", "write every figure as JSON to this file")
	fs.BoolVar(&o.markdown, "markdown", false, "print the tables as Markdown")
	fs.StringVar(&o.verify, "verify", "sample", "list responses: sample (decode one per scenario, then check status, length and framing) or all (decode every one; measures the client)")
	fs.BoolVar(&o.idleRSS, "idle-rss", false, "only measure target 9: build cmd/node, start one member process with an empty data dir, read its VmRSS (and again with --release-startup-memory 0)")
	fs.DurationVar(&o.idleWait, "idle-wait", 10*time.Second, "with -idle-rss: how long the member idles before its RSS is read")
	fs.IntVar(&o.raftScale, "raft-timeout-scale", 4, "multiply the in-process members' Raft heartbeat, election and lease timeouts (1: node's defaults, which -processes uses; see bench/README.md)")
	fs.StringVar(&o.logLevel, "log-level", "warn", "members' log level (debug, info, warn, error)")
	fs.BoolVar(&o.processes, "processes", false, "run the members as `node` processes (built from cmd/node) and print each one's memory after the fill and at the end (target 8 on RSS); they use node's Raft timeouts")
	fs.StringVar(&o.heapProfiles, "heap-profiles", "", "with -processes: save each member's heap profile after the fill as DIR/<member>-heap.pb.gz (and -heap.txt, with the runtime's MemStats), and its /proc smaps as DIR/<member>-smaps")
	fs.StringVar(&o.opsFlag, "ops", "", "with -processes: after the scenarios, time these operations, separated by commas, or all: "+
		strings.Join(opNames, ", ")+" (see bench/README.md)")
	fs.StringVar(&o.note, "note", "", "free text stored in the JSON (machine, purpose)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	scaleSet := false
	fs.Visit(func(f *flag.Flag) { scaleSet = scaleSet || f.Name == "raft-timeout-scale" })
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	case o.members != 1 && o.members != 3 && o.members != 5:
		return o, fmt.Errorf("-members %d: want 1, 3 or 5", o.members)
	case o.clients < 1 || o.runs < 1 || o.watchers < 1 || o.raftScale < 1 || o.simNodes < 0 || o.scheduleReplicas < 1:
		return o, errors.New("-clients, -runs, -watchers and -raft-timeout-scale must be positive")
	case o.objects < groups:
		return o, fmt.Errorf("-objects must be at least %d (the selector matches 1/%d)", groups, groups)
	case o.duration <= 0:
		return o, errors.New("-duration must be positive")
	case o.verify != "sample" && o.verify != "all":
		return o, fmt.Errorf("-verify %q: want sample or all", o.verify)
	case o.processes && scaleSet && o.raftScale != 1:
		return o, fmt.Errorf("-raft-timeout-scale %d with -processes: node has no flags for its Raft timeouts, member processes use its defaults (-raft-timeout-scale 1)", o.raftScale)
	case o.heapProfiles != "" && !o.processes:
		return o, errors.New("-heap-profiles needs -processes (in-process members share one heap: use -cpuprofile's process instead)")
	case o.processes && o.idleRSS:
		return o, errors.New("-idle-rss and -processes: choose one (-idle-rss starts its own member process)")
	case o.opsFlag != "" && !o.processes:
		return o, errors.New("-ops needs -processes (an op stops, starts and restores member processes)")
	}
	var err error
	if o.ops, err = parseOps(o.opsFlag); err != nil {
		return o, err
	}
	for _, op := range []string{opRestart, opKill} {
		if slices.Contains(o.ops, op) && o.members == 1 {
			return o, fmt.Errorf("-ops %s needs a follower to restart: -members 3 or 5", op)
		}
	}
	if o.processes {
		o.raftScale = 1
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	opts, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	// members' logs (member processes' stderr is copied by a goroutine
	// each), fill progress and the bench all write to it
	stderr = &syncWriter{w: stderr}
	goroutines := runtime.NumGoroutine()
	rep := &report.Report{Schema: report.SchemaVersion, Date: time.Now().UTC().Format(time.RFC3339),
		Note: opts.note, Machine: machine(),
		Config: report.Config{Members: opts.members, Clients: opts.clients, Objects: opts.objects,
			Watchers: opts.watchers, Runs: opts.runs, Duration: opts.duration.String(),
			Processes: opts.processes, RaftTimeouts: fmt.Sprintf("x%d", opts.raftScale)}}
	if opts.processes {
		rep.Config.RaftTimeouts = "node defaults"
	}
	if w := busyWarning(); w != "" {
		fmt.Fprintln(stderr, "WARNING:", w)
		rep.Warnings = append(rep.Warnings, w)
	}
	tmp, err := os.MkdirTemp("", "api_load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	if opts.idleRSS {
		fmt.Fprintf(stderr, "building cmd/node and starting one member; its RSS is read %v after it started\n", opts.idleWait)
		if rep.IdleRSS, err = measureIdleRSS(ctx, tmp, opts.idleWait, stderr); err != nil {
			return err
		}
	} else {
		sel, err := selectScenarios(opts.scenario, opts.compareSingle)
		if err != nil {
			return err
		}
		b := &bench{opts: opts, tmp: tmp, stderr: stderr, rep: rep}
		if err := b.level.UnmarshalText([]byte(opts.logLevel)); err != nil {
			return fmt.Errorf("-log-level: %w", err)
		}
		b.log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: &b.level}))
		if err := b.run(ctx, sel); err != nil {
			return err
		}
	}
	if w := leftGoroutines(goroutines); w != "" {
		fmt.Fprintln(stderr, "WARNING:", w)
		rep.Warnings = append(rep.Warnings, "goroutines left after closing everything")
	}
	rep.Targets = report.ComputeTargets(rep)
	printReport(stdout, rep, opts)
	if opts.jsonOut != "" {
		if err := rep.Save(opts.jsonOut); err != nil {
			return err
		}
	}
	return nil
}

// printReport prints the tables.
func printReport(w io.Writer, rep *report.Report, o options) {
	c := rep.Config
	if !o.idleRSS {
		kind := "in-process members"
		if c.Processes {
			kind = "member processes"
		}
		fmt.Fprintf(w, "api_load: %d %s (Raft timeouts %s), %d clients, %d ConfigMaps, %d runs of %s each (medians), %d CPUs\n\n",
			c.Members, kind, c.RaftTimeouts, c.Clients, c.Objects, c.Runs, c.Duration, rep.Machine.CPUs)
		report.ScenarioTable(rep).Write(w, o.markdown)
		fmt.Fprintln(w)
	}
	if f := rep.Fill; f != nil {
		fmt.Fprintf(w, "fill: %d ConfigMaps of %d bytes (%.1f MiB of JSON) in %.1fs, %s creates/s",
			f.Objects, f.ObjectBytes, float64(f.StoredBytes)/(1<<20), f.Seconds, report.FormatOps(f.OpsPerSec))
		if f.ListBytes > 0 {
			fmt.Fprintf(w, "; list_all response %d bytes, list_selector %d", f.ListBytes, f.SelectorBytes)
		}
		fmt.Fprintln(w)
	}
	if m := rep.Memory; m != nil {
		fmt.Fprintf(w, "Go live heap of this process (all %d members and the clients): %.1f MiB after fill, %.1f MiB at the end (%.1f MiB mapped)\n",
			m.Members, float64(m.HeapLiveAfterFill)/(1<<20), float64(m.HeapLiveAtEnd)/(1<<20), float64(m.GoMappedAtEnd)/(1<<20))
	}
	if len(rep.MemberMemory) > 0 {
		fmt.Fprintln(w, "\nmemory of each member process:")
		report.MemoryTable(rep).Write(w, o.markdown)
		fmt.Fprintln(w)
	}
	if rep.Ops != nil {
		fmt.Fprintln(w, "operations (-ops):")
		report.OpsTable(rep.Ops).Write(w, o.markdown)
		fmt.Fprintln(w)
	}
	if !o.idleRSS {
		fmt.Fprintf(w, "controller resyncs (informers that fell behind the change feed), all members: %d\n", rep.ControllerResyncs)
	}
	if i := rep.IdleRSS; i != nil {
		fmt.Fprintf(w, "idle member process %gs after start: VmRSS %.1f MiB (anonymous %.1f, file %.1f; VmHWM %.1f)\n",
			i.WaitSeconds, mib(i.VmRSS), mib(i.RssAnon), mib(i.RssFile), mib(i.VmHWM))
		if k := i.StartupKept; k != nil {
			fmt.Fprintf(w, "  with --release-startup-memory 0: VmRSS %.1f MiB (anonymous %.1f, file %.1f)\n",
				mib(k.VmRSS), mib(k.RssAnon), mib(k.RssFile))
		}
	}
	if len(rep.Targets) > 0 {
		fmt.Fprintln(w, "\ntargets (issue 4):")
		report.TargetTable(rep.Targets).Write(w, o.markdown)
	}
	for _, x := range rep.Warnings {
		fmt.Fprintln(w, "WARNING:", x)
	}
}

// syncWriter serializes writes to w, which may not be safe for concurrent
// use (a bytes.Buffer in tests).
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// leftGoroutines waits a little for goroutines to end and describes those
// left beyond the count at start, or returns "".
func leftGoroutines(before int) string {
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			return fmt.Sprintf("%d goroutines left (%d at start):\n%s", runtime.NumGoroutine(), before,
				buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(50 * time.Millisecond)
	}
	return ""
}

// startProfile starts a CPU profile when path is set; the returned stop
// is always safe to call.
func startProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}
