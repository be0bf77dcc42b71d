package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/litek8s/litek8s/internal/controllers/simnode"
	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/memtrim"
	"github.com/litek8s/litek8s/internal/memtune"
	"github.com/litek8s/litek8s/internal/version"
)

// errVersion is loadConfig's answer to --version: print it and exit 0.
var errVersion = errors.New("version requested")

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "node:", err)
		if errors.As(err, new(usageError)) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

func run(args []string) error {
	v, err := loadConfig(args)
	if err != nil {
		switch {
		case errors.Is(err, pflag.ErrHelp):
			return nil
		case errors.Is(err, errVersion):
			fmt.Println(version.Get())
			return nil
		}
		return err
	}
	cfg, err := memberConfig(v)
	if err != nil {
		return err
	}
	tuner, err := startMemtune(v, cfg.Logger)
	if err != nil {
		return err
	}
	defer tuner.Stop()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	var own *pod // the member's Pod, when a flag needs Kubernetes
	if key, peers, prune := v.GetString("leader-label"), v.GetBool("kubernetes-peers"),
		v.GetBool("remove-scaled-down-members"); key != "" || peers || prune {
		if own, err = ownPod("--leader-label, --kubernetes-peers and --remove-scaled-down-members"); err != nil {
			return err
		}
		if peers {
			d, err := own.peerDialer(cfg.APIAdvertise, cfg.Logger)
			if err != nil {
				return err
			}
			cfg.Dial = d.DialContext
		}
	}
	m, err := member.Start(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Printf("litek8s member %s serving %s (raft %s), %s\n", cfg.ID, m.URL(), m.Store().RaftAddr(), version.Get().Version)
	if m.Kubeconfig() != "" {
		fmt.Printf("kubeconfig: %s\n", m.Kubeconfig())
	}
	stopLabel, stopPruner := func() {}, func() {}
	if key := v.GetString("leader-label"); key != "" {
		if stopLabel, err = own.startPodLabel(ctx, key, m, cfg.Logger); err != nil {
			return errors.Join(fmt.Errorf("leader-label: %w", err), m.Close())
		}
	}
	if v.GetBool("remove-scaled-down-members") {
		if stopPruner, err = own.startPruner(ctx, cfg.ID, m, cfg.Logger); err != nil {
			stopLabel()
			return errors.Join(err, m.Close())
		}
	}
	if d := v.GetDuration("release-startup-memory"); d > 0 {
		t := time.AfterFunc(d, func() { releaseStartupMemory(cfg.Logger) })
		defer t.Stop()
		stopTrim := trimPeriodically(ctx, trimEvery)
		defer stopTrim()
	}
	<-ctx.Done()
	cfg.Logger.Info("shutting down")
	stopPruner()
	stopLabel() // the Pod says "not leader" before the member hands leadership over
	return m.Close()
}

// loadConfig binds flags, LITEK8S_* env and the config file into viper.
func loadConfig(args []string) (*viper.Viper, error) {
	fs := flagSet()
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, err
		}
		return nil, usageError{err}
	}
	if printVersion, _ := fs.GetBool("version"); printVersion {
		return nil, errVersion
	}
	if fs.NArg() > 0 {
		return nil, usageError{fmt.Errorf("unexpected argument %q: node takes only flags (see node --help)", fs.Arg(0))}
	}
	v := viper.New()
	v.SetEnvPrefix("LITEK8S")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	if err := v.BindPFlags(fs); err != nil {
		return nil, err
	}
	if f := v.GetString("config"); f != "" {
		if err := readConfigFile(v, f, fs); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// flagSet defines every flag of node, in the order `node --help` and
// README's Configuration table (generated from it: TestREADMEFlagTable)
// list them. The usage strings are that table's descriptions.
func flagSet() *pflag.FlagSet {
	def := member.DefaultConfig()
	fs := pflag.NewFlagSet("node", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.String("config", "", "config file (yaml, json or toml)")
	fs.Bool("version", false, "print the version and exit")
	fs.String("id", def.ID, "member ID, stable across restarts")
	fs.String("data-dir", def.DataDir, "data directory (wal/, snapshots/, tls/, kubeconfig)")
	fs.String("api-addr", def.APIAddr, "HTTPS API listen address (port 0 picks one)")
	fs.String("api-advertise", "", "host:port peers and clients use to reach the API (default: the listen address)")
	fs.String("raft-addr", def.Store.RaftAddr, "Raft TCP listen address (port 0 picks one)")
	fs.String("raft-advertise", "", "host:port peers use to reach Raft (default: the listen address)")
	fs.StringSlice("hostname", nil, "extra DNS names or IPs for the serving certificate")
	fs.String("join", "", "API URL of any member of the cluster to join (first start only)")
	fs.String("join-token", "", "the cluster's join token (<data-dir>/tls/join-token of a member); "+
		"a member that bootstraps a cluster makes it the cluster's (default: a random one)")
	fs.String("ca-hash", "", "sha256:<hex> of the cluster CA (members log it): a first join verifies the member it joins through with it")
	fs.String("ca-cert-file", "", "PEM CA certificate of a cluster this member bootstraps, with --ca-key-file (default: a new CA, valid 10 years); joiners receive the cluster's")
	fs.String("ca-key-file", "", "PEM private key of --ca-cert-file")
	fs.String("tls-cert-file", "", "PEM API serving certificate (the leaf, then its intermediates) served to clients instead of the member certificate, with --tls-private-key-file; read again every --tls-reload-interval and on ctl certs rotate")
	fs.String("tls-private-key-file", "", "PEM private key of --tls-cert-file")
	fs.Duration("tls-reload-interval", def.CertReloadInterval, "how often --tls-cert-file and --tls-private-key-file are read again (a changed, valid pair serves new connections)")
	fs.Duration("cert-validity", def.CertValidity, "lifetime of the member certificate this member issues itself (renewed at 2/3 of it, without a restart); shorten only to test renewal (minimum 1m)")
	fs.String("admin-token", "", "admin token of a cluster this member bootstraps (default: none; members keep only its hash, tls/admin-token.sha256)")
	fs.String("write-kubeconfig", "", "where to write an admin kubeconfig (a client certificate of the cluster CA, valid a year) once the member serves "+
		"(a new cluster: once its system namespaces exist) (default <data-dir>/kubeconfig; \""+member.NoKubeconfig+"\": nowhere)")
	fs.Bool("nonvoter", false, "join without a vote (serves reads, never counts for a quorum)")
	fs.Int("bootstrap-expect", 0, "form a new cluster once this many fresh members among --peers are reachable (exactly one bootstraps, the others join it)")
	fs.StringSlice("peers", nil, "API URLs of the other members (with --bootstrap-expect; a restarted member checks it is in their cluster)")
	fs.String("log-level", "info", "debug, info, warn or error")
	fs.String("log-format", "text", "text (slog's key=value lines) or json (one object a line)")
	fs.String("metrics-addr", "", "plain-HTTP listen address that serves only GET /metrics, without credentials (empty: off; /metrics on the API needs the admin token)")
	fs.Int("feed-size", def.Store.FeedSize, "change-feed window (events a watch can resume from)")
	fs.Uint64("snapshot-threshold", def.Store.SnapshotThreshold, "log entries between automatic snapshots")
	fs.Uint64("trailing-logs", def.Store.TrailingLogs, "log entries kept after a snapshot")
	fs.Duration("snapshot-interval", def.Store.SnapshotInterval, "how often Raft checks whether to snapshot (at a random moment between it and twice it)")
	fs.Uint64("resync-lag-entries", def.Store.ResyncLagEntries, "a follower lagging more entries than this is told to resync (0: never)")
	fs.Duration("dead-member-timeout", def.Store.DeadMemberTimeout, "the leader removes a member it has not reached for this long from the Raft configuration, keeping at least --min-quorum voters (0: never)")
	fs.Int("min-quorum", def.Store.MinQuorum, "dead-member cleanup never leaves fewer voters than this")
	fs.Duration("commit-timeout", def.Store.CommitTimeout,
		"how long Raft's replication waits for a write before sending followers an AppendEntries anyway (followers learn commits at once without it; lower: more idle traffic)")
	fs.String("source-ip", "", "connections to other members come from this address (tests give each member its own loopback address)")
	fs.String("encryption-provider-config", "", "kube's EncryptionConfiguration (apiserver.config.k8s.io/v1): "+
		"the resources it lists are encrypted in the Raft log, snapshots and backups; every member needs the same file")
	fs.String("token-auth-file", "", "static bearer tokens, kube's CSV format: token,user,uid,\"group1,group2\"")
	fs.Bool("anonymous-auth", def.AnonymousAuth,
		"requests without credentials are system:anonymous, for RBAC to decide (off: 401, except health and /version)")
	fs.Bool("profiling", def.Profiling, "serve Go's CPU, heap and goroutine profiles under /debug/pprof/ on the API to requests RBAC allows that non-resource URL (kube's flag; cluster-admin has it)")
	fs.String("audit-policy-file", "", "audit.k8s.io/v1 Policy: which requests the audit log records, at which level (empty: no audit log)")
	fs.String("audit-log-path", "", "audit log file, JSON lines of audit.k8s.io/v1 Event; - is stdout (needs --audit-policy-file)")
	fs.Int("audit-log-maxsize", 0, "rotate the audit log at this many megabytes (0: 100)")
	fs.Int("audit-log-maxbackup", 0, "rotated audit log files kept (0: all, within --audit-log-maxage)")
	fs.Int("audit-log-maxage", 0, "days rotated audit log files are kept (0: no limit)")
	fs.Int("max-requests-inflight", def.Limits.MaxRequestsInflight,
		"read-only requests served at once (kube's flag); more get 429 with Retry-After: 1 (0: no limit). "+
			"Health paths, member-to-member traffic and the member's own controllers are never refused")
	fs.Int("max-mutating-requests-inflight", def.Limits.MaxMutatingRequestsInflight,
		"writes served at once (kube's flag); more get 429 (0: no limit)")
	fs.Int("max-watches-inflight", def.Limits.MaxWatchesInflight, "open watches (kube counts none); more get 429 (0: no limit)")
	fs.Duration("request-timeout", def.Limits.RequestTimeout,
		"deadline of every request but watches (kube's flag; ?timeout= may shorten it); past it kube's 504")
	fs.Duration("min-request-timeout", def.Limits.MinRequestTimeout,
		"a watch without timeoutSeconds ends after a random time between this and twice this (kube's flag)")
	fs.Int("max-object-size-bytes", def.Limits.MaxObjectBytes,
		"largest object stored, as encoded (etcd's default request limit); a write that makes a larger one gets 413 "+
			"RequestEntityTooLarge (request bodies are limited to kube's 3 MiB)")
	fs.Duration("release-startup-memory", 3*time.Second,
		"this long after start, give back what only start-up used: heap garbage, and the pages of the executable package inits touched; afterwards, every 15 s, the executable's pages mapped since once they exceed 8 MiB and the heap's free pages once they exceed 4 MiB (0: never)")
	fs.String("memory-limit", "", "soft limit of the member's memory (Go's GOMEMLIMIT), a quantity such as 512Mi: the collector works harder near it "+
		"(default: 90% of the container's cgroup memory limit when it has one, else none; 0: none)")
	fs.String("heap-headroom", "12Mi", "how much the Go heap may grow past its live bytes before a collection once it holds more than that "+
		"(GOGC lowered down to 10 as the stored objects grow; 0: Go's default GOGC=100, the heap doubles). GOGC in the environment wins")
	fs.Bool("kubernetes-peers", false, "in a Kubernetes StatefulSet: dial peers' names <pod>.<domain of --api-advertise> at their Pods' IPs, "+
		"read from the Kubernetes API (needs POD_NAMESPACE, POD_NAME and RBAC to get pods), instead of through DNS, "+
		"whose negative cache hides Pods that start late")
	fs.Bool("remove-scaled-down-members", false, "in a Kubernetes StatefulSet: while leading, remove from Raft the members "+
		"whose ordinal the StatefulSet no longer has (needs RBAC to get the StatefulSet)")
	fs.String("leader-label", "", "in Kubernetes: label this member's own Pod KEY=true while it leads (needs POD_NAMESPACE, POD_NAME and RBAC to patch it)")
	fs.Int("simulated-nodes", def.Controllers.Scheduling.SimNodes.Count,
		"simulated nodes the leader registers and runs pods on, like KWOK (sim-node-0, ...: 32 cpu, 256Gi, 110 pods, leases; 0: none)")
	fs.String("simulated-node-taints", "", "taints every simulated node registers with, as kubectl taint writes them: "+
		"key=value:Effect or key:Effect, comma-separated (e.g. litek8s.io/simulated=true:NoSchedule keeps pods that do not tolerate it off them); "+
		"a malformed one is refused at start")
	return fs
}

func memberConfig(v *viper.Viper) (member.Config, error) {
	log, err := newLogger(os.Stderr, v.GetString("log-format"), v.GetString("log-level"))
	if err != nil {
		return member.Config{}, err
	}
	cfg := member.DefaultConfig()
	cfg.Logger = log
	cfg.ID = v.GetString("id")
	cfg.DataDir = v.GetString("data-dir")
	cfg.APIAddr = v.GetString("api-addr")
	cfg.APIAdvertise = v.GetString("api-advertise")
	cfg.Hostnames = v.GetStringSlice("hostname")
	cfg.Join = v.GetString("join")
	cfg.JoinToken = v.GetString("join-token")
	cfg.AdminToken = v.GetString("admin-token")
	cfg.WriteKubeconfig = v.GetString("write-kubeconfig")
	cfg.CAHash = v.GetString("ca-hash")
	for _, f := range []struct {
		flag string
		to   *[]byte
	}{{"ca-cert-file", &cfg.CACert}, {"ca-key-file", &cfg.CAKey}} {
		if name := v.GetString(f.flag); name != "" {
			b, err := os.ReadFile(name)
			if err != nil {
				return member.Config{}, fmt.Errorf("%s: %w", f.flag, err)
			}
			*f.to = b
		}
	}
	cfg.TLSCertFile = v.GetString("tls-cert-file")
	cfg.TLSKeyFile = v.GetString("tls-private-key-file")
	cfg.CertReloadInterval = v.GetDuration("tls-reload-interval")
	cfg.CertValidity = v.GetDuration("cert-validity")
	cfg.BootstrapExpect = v.GetInt("bootstrap-expect")
	cfg.Nonvoter = v.GetBool("nonvoter")
	cfg.Peers = v.GetStringSlice("peers")
	cfg.MetricsAddr = v.GetString("metrics-addr")
	cfg.TokenAuthFile = v.GetString("token-auth-file")
	cfg.EncryptionProviderConfig = v.GetString("encryption-provider-config")
	cfg.SourceIP = v.GetString("source-ip")
	cfg.AnonymousAuth = v.GetBool("anonymous-auth")
	cfg.Profiling = v.GetBool("profiling")
	cfg.Audit.PolicyFile = v.GetString("audit-policy-file")
	cfg.Audit.Path = v.GetString("audit-log-path")
	cfg.Audit.MaxSizeMB = v.GetInt("audit-log-maxsize")
	cfg.Audit.MaxBackups = v.GetInt("audit-log-maxbackup")
	cfg.Audit.MaxAgeDays = v.GetInt("audit-log-maxage")
	cfg.Limits.MaxRequestsInflight = v.GetInt("max-requests-inflight")
	cfg.Limits.MaxMutatingRequestsInflight = v.GetInt("max-mutating-requests-inflight")
	cfg.Limits.MaxWatchesInflight = v.GetInt("max-watches-inflight")
	cfg.Limits.RequestTimeout = v.GetDuration("request-timeout")
	cfg.Limits.MinRequestTimeout = v.GetDuration("min-request-timeout")
	cfg.Limits.MaxObjectBytes = v.GetInt("max-object-size-bytes")
	cfg.Store.RaftAddr = v.GetString("raft-addr")
	cfg.Store.RaftAdvertise = v.GetString("raft-advertise")
	cfg.Store.FeedSize = v.GetInt("feed-size")
	cfg.Store.SnapshotThreshold = v.GetUint64("snapshot-threshold")
	cfg.Store.TrailingLogs = v.GetUint64("trailing-logs")
	cfg.Store.SnapshotInterval = v.GetDuration("snapshot-interval")
	cfg.Store.ResyncLagEntries = v.GetUint64("resync-lag-entries")
	cfg.Store.DeadMemberTimeout = v.GetDuration("dead-member-timeout")
	cfg.Store.MinQuorum = v.GetInt("min-quorum")
	cfg.Store.CommitTimeout = v.GetDuration("commit-timeout")
	cfg.Controllers.Scheduling.SimNodes.Count = v.GetInt("simulated-nodes")
	taints, err := simnode.ParseTaints(v.GetString("simulated-node-taints"))
	if err != nil {
		return member.Config{}, fmt.Errorf("simulated-node-taints: %w", err)
	}
	cfg.Controllers.Scheduling.SimNodes.Taints = taints
	return cfg, cfg.Validate()
}

// executableKept is how much of the executable may stay mapped between
// two trims: an idle member runs 6-9 MiB of it, a leader under a burst of
// writes maps 20-28 MiB in 15 s.
const executableKept = 8 << 20

// heapFreeKept is how much free heap may stay in the RSS between two
// releases (the scavenger returns it over minutes).
const heapFreeKept = 4 << 20

// trimEvery is how often the executable's pages mapped since the last
// time are unmapped once they exceed executableKept, and the heap's free
// pages given back once they exceed heapFreeKept (a collection, then the
// pages); under load the heap grows back to its goal, so this bounds what
// a burst leaves.
const trimEvery = 15 * time.Second

// trimPeriodically runs the trims of trimEvery (memtrim.TrimExecutable,
// memtune.ReleaseFree) every interval; stop ends it and waits.
func trimPeriodically(ctx context.Context, interval time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				memtrim.TrimExecutable(executableKept) // best effort: the next tick tries again
				memtune.ReleaseFree(heapFreeKept)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// releaseStartupMemory gives back what only start-up used (see memtrim).
func releaseStartupMemory(log *slog.Logger) {
	r, err := memtrim.Trim()
	if err != nil {
		log.Warn("release start-up memory", "err", err)
		return
	}
	log.Info("released start-up memory", "rss_before_mib", r.RSSBefore>>20, "rss_after_mib", r.RSSAfter>>20,
		"executable_unmapped_mib", r.Unmapped>>20)
}
