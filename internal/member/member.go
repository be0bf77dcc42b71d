package member

import (
	"github.com/prometheus/client_golang/prometheus"

	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/litek8s/litek8s/internal/api"
	"github.com/litek8s/litek8s/internal/api/admission/webhook"
	"github.com/litek8s/litek8s/internal/api/aggregator"
	"github.com/litek8s/litek8s/internal/api/discovery"
	"github.com/litek8s/litek8s/internal/audit"
	"github.com/litek8s/litek8s/internal/auth"
	"github.com/litek8s/litek8s/internal/controllers"
	"github.com/litek8s/litek8s/internal/encryption"
	"github.com/litek8s/litek8s/internal/kv"
	"github.com/litek8s/litek8s/internal/member/certs"
	"github.com/litek8s/litek8s/internal/member/datadir"
	"github.com/litek8s/litek8s/internal/raftlog"
	"github.com/litek8s/litek8s/internal/raftstore"
	"github.com/litek8s/litek8s/internal/version"
)

// Config configures one member. Start from DefaultConfig.
type Config struct {
	ID      string
	DataDir string
	// APIAddr is where the HTTPS API listens ("127.0.0.1:0" picks a port);
	// APIAdvertise, when set, is the host:port peers and clients use.
	APIAddr, APIAdvertise string
	// Hostnames are extra DNS names (and IPs) for the serving certificate.
	Hostnames []string
	// Join is the API URL of any member of an existing cluster; empty
	// bootstraps a new cluster on first start (see BootstrapExpect).
	Join string
	// JoinToken authenticates a join. A member that bootstraps a cluster
	// makes it the cluster's join token (a random one when empty).
	JoinToken string
	// CAHash ("sha256:<hex>"), when set, makes a first join verify the
	// member it joins through against the cluster CA with that hash.
	CAHash string
	// AdminToken is the admin token of a cluster this member bootstraps
	// (none when empty: clients use the client certificates of the admin
	// kubeconfigs). Members keep only its hash; joiners receive the hash.
	AdminToken string
	// WriteKubeconfig is where the member writes an admin kubeconfig (a
	// client certificate of the cluster CA) at start: empty is
	// <DataDir>/kubeconfig, NoKubeconfig nowhere.
	WriteKubeconfig string
	// CACert and CAKey (PEM, both or neither) are the CA of a cluster this
	// member bootstraps: a Helm chart that generates it at install can
	// give clients the CA to verify members with. Empty: a new one.
	// Joiners receive the cluster's.
	CACert, CAKey []byte
	// BootstrapExpect > 1 makes a fresh member wait for that many fresh
	// members among Peers (their API URLs; this member's own may be among
	// them) and lets the one with the lowest ID bootstrap the cluster; the
	// others join it, as does a fresh member that finds a peer already in a
	// cluster. Every one of them needs JoinToken.
	BootstrapExpect int
	Peers           []string
	// CertValidity is the lifetime of the member certificate (renewed at
	// 2/3 of it, without a restart); tests shorten it.
	CertValidity time.Duration
	// TLSCertFile and TLSKeyFile (both or neither) are an operator's API
	// serving certificate (kube's --tls-cert-file/--tls-private-key-file),
	// served to clients instead of the member certificate and read again
	// every CertReloadInterval (and on `ctl certs rotate`).
	TLSCertFile, TLSKeyFile string
	CertReloadInterval      time.Duration
	// Nonvoter joins the cluster without a vote (it serves reads and
	// never counts for a quorum).
	Nonvoter bool
	// Store configures Raft; its ID, DataDir, APIURL, Bootstrap, Derive,
	// Peer, RaftTLS, PeerAuth, JoinToken, JoinSecrets and ClusterID are
	// filled in by Start.
	Store raftstore.Config
	// Controllers configures the leader-only controllers.
	Controllers controllers.Config
	// EncryptionProviderConfig is kube's --encryption-provider-config: the
	// path of an EncryptionConfiguration (internal/encryption) whose
	// resources enter the Raft log, snapshots and backups encrypted. Every
	// member needs the same one. Empty: nothing is encrypted.
	EncryptionProviderConfig string
	// MetricsAddr, when set, is a plain-HTTP listener ("127.0.0.1:0" picks
	// a port) that serves only GET /metrics, without credentials.
	MetricsAddr string
	// TokenAuthFile is kube's static token file (CSV: token,user,uid,
	// "group1,group2"); empty: none.
	TokenAuthFile string
	// AnonymousAuth lets requests without credentials through as
	// system:anonymous, for RBAC to decide (kube's --anonymous-auth);
	// off, they get 401 except on the health paths and /version.
	AnonymousAuth bool
	// Profiling serves Go's profiles under /debug/pprof/ on the API to
	// requests RBAC allows (kube's --profiling).
	Profiling bool
	// Limits bound the API's requests in flight, bodies, stored objects
	// and request times.
	Limits api.Limits
	// Audit is the audit policy and log (kube's --audit-policy-file and
	// --audit-log-*); no policy: no audit log.
	Audit audit.Config
	// SourceIP, when set, is the address this member's connections to the
	// others come from (Raft, internal calls, forwarded writes): tests give
	// each member its own loopback address for a fault-injecting proxy.
	SourceIP string
	// Dial, when set, opens every connection this member makes to another
	// (hello, join, Raft, internal calls, forwarded writes) instead of a
	// net.Dialer from SourceIP. cmd/node sets it in Kubernetes so that
	// peers' StatefulSet names resolve through their Pods (kubepeers).
	Dial   func(ctx context.Context, network, address string) (net.Conn, error)
	Logger *slog.Logger
}

// NoKubeconfig as Config.WriteKubeconfig writes no kubeconfig.
const NoKubeconfig = "none"

// DefaultConfig returns the configuration of `node` with no flags.
func DefaultConfig() Config {
	return Config{ID: "node-1", DataDir: "data", APIAddr: "127.0.0.1:6443", AnonymousAuth: true, Profiling: true,
		Limits: api.DefaultLimits(), Store: raftstore.DefaultConfig(), Controllers: controllers.DefaultConfig(),
		CertValidity: certs.DefaultValidity, CertReloadInterval: certs.DefaultConfig().ReloadInterval,
		Logger: slog.Default()}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	switch {
	case c.ID == "" || c.DataDir == "" || c.APIAddr == "":
		return errors.New("member: ID, DataDir and APIAddr are required")
	case len(validation.IsDNS1123Label(c.ID)) > 0:
		// The chart's IDs are Pod names; the ID also becomes the member
		// certificate's name and a Raft server ID.
		return fmt.Errorf("member: invalid member ID %q: %s (like a Pod name: lower-case letters, digits and '-')",
			c.ID, strings.Join(validation.IsDNS1123Label(c.ID), "; "))
	case c.Join != "" && c.JoinToken == "":
		return errors.New("member: joining needs the cluster's join token")
	case c.Join != "" && checkMemberURL(c.Join) != nil:
		return fmt.Errorf("member: join: %w", checkMemberURL(c.Join))
	case c.BootstrapExpect > 1 && (len(c.Peers) == 0 || c.JoinToken == ""):
		return errors.New("member: bootstrap-expect needs the peers' addresses and the join token")
	case c.BootstrapExpect > 1 && c.Join != "":
		return errors.New("member: give either join or bootstrap-expect")
	case (len(c.CACert) == 0) != (len(c.CAKey) == 0):
		return errors.New("member: give both the CA certificate and its key, or neither")
	case len(c.CACert) > 0:
		if err := datadir.CheckCA(c.CACert, c.CAKey); err != nil {
			return err
		}
	case c.SourceIP != "" && net.ParseIP(c.SourceIP) == nil:
		return fmt.Errorf("member: source IP %q is not an IP address", c.SourceIP)
	case c.Logger == nil:
		return errors.New("member: Logger is required")
	case c.CertValidity < certs.MinValidity:
		return fmt.Errorf("member: certificate validity %s is shorter than %s", c.CertValidity, certs.MinValidity)
	case (c.TLSCertFile == "") != (c.TLSKeyFile == ""):
		return errors.New("member: give both the TLS certificate file and its key file, or neither")
	case c.CertReloadInterval <= 0:
		return errors.New("member: the certificate reload interval must be positive")
	case c.Store.DeadMemberTimeout < 0 || (c.Store.DeadMemberTimeout > 0 && c.Store.DeadMemberTimeout < 2*c.Store.ElectionTimeout):
		return fmt.Errorf("member: dead-member timeout %s: want 0 (never) or at least two election timeouts (%s)",
			c.Store.DeadMemberTimeout, 2*c.Store.ElectionTimeout)
	case c.Store.MinQuorum < 1:
		return fmt.Errorf("member: min quorum %d: want at least 1", c.Store.MinQuorum)
	}
	for _, p := range c.Peers {
		if err := checkMemberURL(p); err != nil {
			return fmt.Errorf("member: peers: %w", err)
		}
	}
	if err := c.Limits.Validate(); err != nil {
		return err
	}
	if err := c.Audit.Validate(); err != nil {
		return err
	}
	return c.Controllers.Validate()
}

// checkMemberURL checks that u can be a member's API URL (https://host or
// https://host:port): a mistyped --join or --peers is refused at start
// instead of being retried for a minute.
func checkMemberURL(u string) error {
	p, err := url.Parse(u)
	if err != nil || p.Scheme != "https" || p.Hostname() == "" || strings.HasSuffix(p.Host, ":") || (p.Path != "" && p.Path != "/") {
		return fmt.Errorf("%q is no member's API URL: want https://host:port", u)
	}
	return nil
}

// Member is one running member.
type Member struct {
	cfg        Config
	log        *slog.Logger
	store      *raftstore.Store
	api        *api.Server
	ctrl       *controllers.Manager
	srv        *http.Server
	ln         net.Listener
	url        string
	dial       dialFunc // to other members
	kubeconfig string
	sec        datadir.Secrets
	version    string // the litek8s version /admin/v1/status reports
	metrics    *prometheus.Registry
	certs      *certs.Manager
	metricsSrv *http.Server // the metrics-only listener's; nil when off
	metricsLn  net.Listener
	audit      *audit.Log // nil without a policy
	dirLock    *datadir.Lock
	frontProxy *frontProxy
	agg        *aggregator.Aggregator
	cancel     context.CancelFunc
	wg         sync.WaitGroup

	// webhooks are the admission webhook plugins (admission.go).
	webhooks *webhook.Webhooks
}

var (
	_ api.Store              = (*raftstore.Store)(nil)
	_ controllers.Store      = (*raftstore.Store)(nil)
	_ controllers.Leadership = (*raftstore.Store)(nil)
)

// Start brings the member up: secrets, store, API, join, controllers.
func Start(ctx context.Context, cfg Config) (_ *Member, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Member{cfg: cfg, log: cfg.Logger.With("member", cfg.ID), metrics: newRegistry()}
	defer func() {
		if err != nil {
			m.Close()
		}
	}()
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("member: data dir: %w", err)
	}
	// First: a second member on the same dir stops here, before it writes
	// anything (and at once, not after the Raft log's lock times out).
	if m.dirLock, err = datadir.TryLock(cfg.DataDir); err != nil {
		return nil, fmt.Errorf("member: %w", err)
	}
	if m.audit, err = audit.Open(cfg.Audit, m.metrics); err != nil { // a bad policy fails the start
		return nil, err
	}
	fresh := !raftlog.Exists(cfg.DataDir)
	if m.ln, err = net.Listen("tcp", cfg.APIAddr); err != nil {
		return nil, fmt.Errorf("member: API listener: %w", err)
	}
	adv := cfg.APIAdvertise
	if adv == "" {
		adv = m.ln.Addr().String()
	}
	m.url = "https://" + adv
	m.dial = cfg.Dial
	if m.dial == nil {
		d := &net.Dialer{Timeout: 10 * time.Second}
		if src := net.ParseIP(cfg.SourceIP); src != nil {
			d.LocalAddr = &net.TCPAddr{IP: src}
		}
		m.dial = d.DialContext
	}
	join := cfg.Join
	if fresh && join == "" && cfg.BootstrapExpect > 1 {
		if join, err = m.discover(ctx); err != nil {
			return nil, err
		}
	}
	sec, err := m.secrets(ctx, fresh, join)
	if err != nil {
		return nil, err
	}
	m.sec = sec
	loopback, err := loopbackToken()
	if err != nil {
		return nil, err
	}
	if !fresh {
		if err := m.checkCluster(ctx, sec.ClusterID()); err != nil {
			return nil, err
		}
	}
	pool, err := sec.CAPool()
	if err != nil {
		return nil, err
	}
	if m.certs, err = m.newCerts(sec, adv); err != nil {
		return nil, err
	}
	peerTransport := &http.Transport{TLSClientConfig: peerClientTLS(pool, m.certs), ForceAttemptHTTP2: true,
		DialContext:         m.dial,
		MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second}
	if err := m.openStore(sec, pool, peerTransport, fresh && join == ""); err != nil {
		return nil, err
	}
	if err := m.startAPI(sec, loopback, apiTLS(pool, m.certs), peerTransport); err != nil {
		return nil, err
	}
	if err := m.startMetrics(); err != nil {
		return nil, err
	}
	tokenHint := "a join token: ctl token create"
	if sec.JoinToken != "" {
		tokenHint = filepath.Join(cfg.DataDir, "tls", "join-token")
	}
	m.log.Info("members join with --join "+m.url+" --join-token <"+tokenHint+"> --ca-hash "+caHashOf(sec.CACert),
		"cluster", sec.ClusterID())
	if fresh && join != "" {
		jctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err := m.store.Join(jctx, join)
		cancel()
		if err != nil {
			return nil, err
		}
	}
	if m.ctrl, err = controllers.New(controllers.Options{Config: cfg.Controllers, Store: m.store,
		Leadership: m.store, API: m.api.LocalOnly(), Token: loopback, Resources: m.servedResources,
		RootCA: sec.CACert, CAKey: sec.CAKey, Members: apiMembers{m.store}, Metrics: m.metrics, Logger: m.log,
		APIServices: &controllers.APIServices{Check: m.agg.Check, Served: m.api.ServedGroupVersions,
			GroupPriority: discovery.GroupPriority}}); err != nil {
		return nil, err
	}
	bctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	nsDone := make(chan struct{})
	m.wg.Add(1)
	go func() { defer m.wg.Done(); defer close(nsDone); m.bootstrapNamespaces(bctx) }()
	m.wg.Add(1)
	go func() { defer m.wg.Done(); m.ctrl.Run(bctx) }() // the controllers, while this member leads
	m.wg.Add(1)
	go func() { defer m.wg.Done(); m.certs.Run(bctx) }() // renewals
	if !fresh {
		m.wg.Add(1)
		go func() { defer m.wg.Done(); m.store.Reannounce(bctx) }() // restarted on another Raft address?
	}
	if fresh && cfg.Join == "" && cfg.BootstrapExpect <= 1 {
		// A new single-member cluster: its first client may create in
		// "default" at once, so the namespaces exist before Start returns.
		select {
		case <-nsDone:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(30 * time.Second):
			return nil, errors.New("member: the new cluster did not create its namespaces within 30s")
		}
	}
	// Last: a script waits for the kubeconfig, then uses the cluster
	// (creates in "default").
	if m.kubeconfig != "" {
		if err := writeKubeconfig(m.kubeconfig, m.url, m.kubeconfigSecrets()); err != nil {
			return nil, fmt.Errorf("member: write kubeconfig: %w", err)
		}
	}
	return m, nil
}

// servedResources lists the API's resources for the controllers.
func (m *Member) servedResources(ctx context.Context) []controllers.Resource {
	rs := m.api.Resources(ctx)
	out := make([]controllers.Resource, len(rs))
	for i, r := range rs {
		out[i] = controllers.Resource{StoreKey: r.StoreKey, Kind: r.Kind, Namespaced: r.Namespaced,
			GVR: schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Resource}}
	}
	return out
}

// secrets loads the member's secrets, creating them on a first bootstrap or
// fetching them from the member at join on a first join.
func (m *Member) secrets(ctx context.Context, fresh bool, join string) (datadir.Secrets, error) {
	sec, ok, err := datadir.LoadSecrets(m.cfg.DataDir)
	if err != nil || ok {
		return sec, err
	}
	switch {
	case !fresh:
		return sec, errors.New("member: data dir has Raft state but no tls/ secrets")
	case join == "":
		sec, err = datadir.NewSecrets(m.cfg.AdminToken, m.cfg.JoinToken, m.cfg.CACert, m.cfg.CAKey)
	default:
		sec, err = fetchSecrets(ctx, m.log, m.dial, join, m.cfg.JoinToken, m.cfg.CAHash)
	}
	if err != nil {
		return sec, err
	}
	return sec, sec.Save(m.cfg.DataDir)
}

// newCerts loads or issues the member certificate for the member's
// addresses and loads the operator's serving certificate.
func (m *Member) newCerts(sec datadir.Secrets, adv string) (*certs.Manager, error) {
	cc := certs.DefaultConfig()
	cc.ID, cc.Dir, cc.CACert, cc.CAKey = m.cfg.ID, datadir.TLSDir(m.cfg.DataDir), sec.CACert, sec.CAKey
	cc.IPs = certIPs(adv, m.cfg.Hostnames)
	cc.Names = certNames(m.cfg.Hostnames, adv, m.cfg.Store.RaftAdvertise)
	cc.Validity, cc.ReloadInterval = m.cfg.CertValidity, m.cfg.CertReloadInterval
	cc.ServingCertFile, cc.ServingKeyFile = m.cfg.TLSCertFile, m.cfg.TLSKeyFile
	cc.Metrics, cc.Logger = m.metrics, m.log
	return certs.New(cc)
}

func (m *Member) openStore(sec datadir.Secrets, pool *x509.CertPool, rt http.RoundTripper, bootstrap bool) error {
	sc := m.cfg.Store
	sc.ID, sc.DataDir, sc.APIURL, sc.Bootstrap, sc.Nonvoter = m.cfg.ID, m.cfg.DataDir, m.url, bootstrap, m.cfg.Nonvoter
	sc.Derive = api.Derive
	if p := m.cfg.EncryptionProviderConfig; p != "" {
		tr, err := encryption.LoadFile(p)
		if err != nil {
			return fmt.Errorf("member: --encryption-provider-config: %w", err)
		}
		sc.Transformer = tr
	}
	sc.Peer = &http.Client{Transport: rt, Timeout: 30 * time.Second}
	sc.RaftTLS, sc.PeerAuth = raftTLS(pool, m.certs), peerAuth
	sc.SourceIP, sc.Dial = net.ParseIP(m.cfg.SourceIP), m.cfg.Dial
	sc.VerifyJoinToken, sc.JoinSecrets, sc.ClusterID, sc.ClusterCA = m.verifyJoinToken, sec.Marshal, sec.ClusterID(), sec.CACert
	sc.Metrics = m.metrics
	sc.Logger = m.cfg.Logger // the store adds member=<id> itself
	var err error
	m.store, err = raftstore.Open(sc)
	return err
}

func (m *Member) startAPI(sec datadir.Secrets, loopback string, tc *tls.Config, rt http.RoundTripper) error {
	ac := api.DefaultConfig()
	ac.Token, ac.AdminTokenHash, ac.Internal, ac.PeerTransport, ac.Logger = loopback, sec.AdminTokenHash, m.store.InternalHandler(), rt, m.log
	ac.Anonymous, ac.MemberOrg, ac.Limits = m.cfg.AnonymousAuth, datadir.MemberOrg, m.cfg.Limits
	ac.Profiling = m.cfg.Profiling
	if f := m.cfg.TokenAuthFile; f != "" {
		tf, err := os.Open(f)
		if err != nil {
			return fmt.Errorf("member: token auth file: %w", err)
		}
		ac.Tokens, err = auth.ParseTokenFile(tf)
		tf.Close()
		if err != nil {
			return fmt.Errorf("member: %s: %w", f, err)
		}
	}
	saKey, err := sec.ServiceAccountKey()
	if err != nil {
		return err
	}
	ac.ServiceAccounts = &auth.ServiceAccountTokens{Key: saKey, Issuer: datadir.ServiceAccountIssuer,
		Audiences: []string{datadir.ServiceAccountIssuer}}
	ac.Admin = m.adminHandler()
	if ac.Kubelets, err = sec.KubeletClient(); err != nil {
		return err
	}
	ac.MetricsHandler, ac.Metrics = metricsHandler(m.metrics), m.metrics
	ac.Audit = m.audit
	m.frontProxy = &frontProxy{sec: sec}
	if m.agg, err = aggregator.New(aggregator.Config{Store: m.store, ClientCert: m.frontProxy.Cert, Logger: m.log}); err != nil {
		return err
	}
	ac.Aggregator = m.agg
	if ac.Admission, err = m.admissionChain(loopback, rt); err != nil {
		return err
	}
	m.version = version.Get().Version
	if m.api, err = api.New(ac, m.store); err != nil {
		return err
	}
	switch m.kubeconfig = m.cfg.WriteKubeconfig; m.kubeconfig {
	case "":
		m.kubeconfig = filepath.Join(m.cfg.DataDir, "kubeconfig")
	case NoKubeconfig:
		m.kubeconfig = ""
	}
	m.srv = &http.Server{Handler: m.api, ReadHeaderTimeout: 10 * time.Second, TLSConfig: tc,
		ErrorLog: slog.NewLogLogger(m.log.Handler(), slog.LevelDebug)}
	ln := tls.NewListener(m.ln, m.srv.TLSConfig)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		if err := m.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.log.Error("API server stopped", "err", err)
		}
	}()
	m.startAdmission()
	return nil
}

// bootstrapNamespaces makes the leader create kube-apiserver's system
// namespaces (default, kube-system, kube-public, kube-node-lease), the
// default RBAC policy and the system PriorityClasses (those missing)
// once; followers leave it to whoever leads.
func (m *Member) bootstrapNamespaces(ctx context.Context) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		if _, self, ok := m.store.Leader(); ok {
			if !self {
				return
			}
			err := m.api.EnsureNamespaces(ctx, "default", "kube-system", "kube-public", "kube-node-lease")
			if err == nil {
				err = m.api.EnsureDefaultPolicy(ctx)
			}
			if err == nil {
				err = m.api.EnsureSystemPriorityClasses(ctx)
			}
			if err == nil {
				err = m.recordInitialJoinToken(ctx)
			}
			if err == nil {
				err = m.publishAuthentication(ctx)
			}
			if err == nil {
				return
			}
			if !errors.Is(err, kv.ErrNotLeader) && ctx.Err() == nil {
				m.log.Warn("creating default namespaces", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// URL returns the member's API URL.
func (m *Member) URL() string { return m.url }

// Kubeconfig returns the path of the admin kubeconfig the member wrote
// ("" when none: Config.WriteKubeconfig).
func (m *Member) Kubeconfig() string { return m.kubeconfig }

// Controllers returns the member's controller manager (for status and
// tests).
func (m *Member) Controllers() *controllers.Manager { return m.ctrl }

// Store returns the member's store (for status and tests).
func (m *Member) Store() *raftstore.Store { return m.store }

// Close stops the controllers and the API (ending watches), then the
// store.
func (m *Member) Close() error {
	if m.cancel != nil {
		m.cancel()
	}
	m.closeAdmission()
	if m.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		m.srv.Shutdown(ctx)
		cancel()
		m.srv.Close()
	} else if m.ln != nil {
		m.ln.Close()
	}
	if m.metricsSrv != nil {
		m.metricsSrv.Close()
	}
	m.wg.Wait()
	if m.agg != nil {
		m.agg.Close()
	}
	m.audit.Close() // after the last request
	var err error
	if m.store != nil {
		err = m.store.Close()
	}
	m.dirLock.Unlock() // last: the store has closed its Raft log
	return err
}
