package api

import (
	"github.com/prometheus/client_golang/prometheus"

	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	kadmission "k8s.io/apiserver/pkg/admission"

	"github.com/litek8s/litek8s/internal/api/admission"
	"github.com/litek8s/litek8s/internal/api/aggregator"
	"github.com/litek8s/litek8s/internal/api/crdvalidation"
	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/api/svcclient"
	"github.com/litek8s/litek8s/internal/audit"
	"github.com/litek8s/litek8s/internal/auth"
)

// Config configures a Server. Start from DefaultConfig.
type Config struct {
	// Token is the loopback token: the member's own clients (its
	// controllers) are auth.LoopbackUser in system:masters with it. It
	// lives only in memory.
	Token string
	// AdminTokenHash verifies the admin token (auth.HashToken); empty:
	// no admin token.
	AdminTokenHash string
	// Tokens are the users of a static token file (token → user).
	Tokens map[string]*auth.User
	// ServiceAccounts signs the tokens of the serviceaccounts/token
	// subresource (TokenRequest) and verifies them; nil: none. Its Lookup
	// and Now are filled in by New when nil.
	ServiceAccounts *auth.ServiceAccountTokens
	// Anonymous lets requests without credentials through as
	// system:anonymous for RBAC to decide (kube's --anonymous-auth); off,
	// they get 401 except on the health paths and /version.
	Anonymous bool
	// MemberOrg is the organization of member certificates (see
	// auth.Authenticator.MemberOrg).
	MemberOrg string
	// Internal serves /internal/ (the store's endpoints between members;
	// they authenticate themselves: a member certificate of the cluster CA,
	// or the join token for joining). Optional.
	Internal http.Handler
	// Admin serves /admin/ (what `ctl` calls) to requests that carry the
	// admin token. Optional.
	Admin http.Handler
	// MetricsHandler serves /metrics (the member's registry) to requests
	// that carry the admin token. Optional.
	MetricsHandler http.Handler
	// Metrics is where the API registers its collectors (nil: none).
	Metrics prometheus.Registerer
	// Profiling serves Go's profiles under /debug/pprof/ (kube's
	// --profiling) to requests RBAC allows the non-resource URL.
	Profiling bool
	// PeerTransport reaches other members' APIs (write forwarding); it must
	// trust their serving certificates.
	PeerTransport http.RoundTripper
	// LeaderWait bounds how long a write waits for a leader to be known.
	LeaderWait time.Duration
	// Now is the clock (Table ages, creation timestamps).
	Now func() time.Time
	// GitVersion is reported by /version.
	GitVersion string
	Logger     *slog.Logger
	// BookmarkInterval is how often a watch with allowWatchBookmarks gets a
	// BOOKMARK (kube: about every minute); 0 means one minute.
	BookmarkInterval time.Duration
	// ContinueTTL is how long a paginated list's continue token stays
	// consistent (kube: until etcd's compaction, every 5 minutes); an
	// older one gets 410 with a token that continues at the current
	// revision (continue.go). 0 means 5 minutes.
	ContinueTTL time.Duration
	// Limits bound requests in flight, bodies, stored objects and request
	// times (limits.go).
	Limits Limits
	// Kubelets reaches the nodes' kubelets and the pods for the connect
	// subresources (pods/log, exec, attach, portforward, the proxies:
	// connect.go); nil answers them 503.
	Kubelets Kubelets
	// Audit is the audit log with its policy (audit.go); nil: no auditing,
	// at no cost.
	Audit *audit.Log
	// Aggregator proxies the group/versions of APIServices with a service
	// (aggregate.go); nil: none are.
	Aggregator *aggregator.Aggregator
	// Admission is the chain of dynamic admission plugins (webhooks,
	// policies: admission_dynamic.go); nil: none, at no cost.
	Admission *admission.Chain
}

// DefaultConfig returns a Config with the defaults filled in.
func DefaultConfig() Config {
	return Config{LeaderWait: 5 * time.Second, Now: time.Now, GitVersion: "v1.37.2-litek8s", Logger: slog.Default(),
		Limits: DefaultLimits(), BookmarkInterval: time.Minute, Anonymous: true}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	switch {
	case c.Token == "":
		return errors.New("api: Token is required")
	case c.Now == nil || c.Logger == nil:
		return errors.New("api: Now and Logger are required")
	case c.LeaderWait <= 0:
		return errors.New("api: LeaderWait must be positive")
	}
	return c.Limits.Validate()
}

// Server is the Kubernetes API of one member.
type Server struct {
	cfg     Config
	store   Store
	log     *slog.Logger
	codecs  *codecs
	scheme  *runtime.Scheme
	handler http.Handler
	fwd     *forwarder

	// reg is the current registry and schemas the discovery and OpenAPI
	// documents built from it; both are replaced together when the served
	// resources change (setRegistry).
	reg     atomic.Pointer[registry.Registry]
	schemas atomic.Pointer[http.ServeMux]
	// builtin are the registry rows of the built-in kinds; crdMu
	// serialises registry rebuilds when CRDs change (refreshCRDs).
	builtin []*registry.Resource
	crdMu   sync.Mutex
	// crdRules compiles the CRDs' x-kubernetes-validations once per CRD
	// generation (used by refreshCRDs, under crdMu).
	crdRules crdvalidation.Compiler
	// metrics are the API's collectors (nil without Config.Metrics).
	metrics *metrics
	// writes is the write path's own state (field managers): see
	// fieldmanager.go.
	writes writeState
	// authn, rbac and policies are who may do what (authz.go).
	authn    *auth.Authenticator
	rbac     *auth.RBAC
	policies policyCache
	// authz chains the Node authorizer (its graph: nodeGraphs) and RBAC
	// (nodeauth.go).
	authz      *auth.Chain
	nodeGraphs nodeGraphCache
	// aggDisco is the aggregated servers' discovery served with the
	// registry's (aggregate.go); replaced under crdMu.
	aggDisco atomic.Pointer[aggDiscovery]
	// objects are the scheme's converters for admission plugins.
	objects kadmission.ObjectInterfaces
	// svc reaches the servers the API calls (CRD conversion webhooks).
	svc *svcclient.Clients
}

// New builds the API server over store.
func New(cfg Config, store Store) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, store: store, log: cfg.Logger, metrics: newMetrics(cfg.Metrics)}
	s.aggDisco.Store(&aggDiscovery{})
	s.svc = svcclient.New(store, nil)
	s.builtin = append(registry.Builtin(), crdKinds()...)
	reg := registry.New(s.builtin)
	var err error
	if s.scheme, err = reg.Scheme(); err != nil {
		return nil, err
	}
	if err := s.setRegistry(reg); err != nil {
		return nil, err
	}
	s.codecs = newCodecs(s.scheme)
	s.objects = admission.NewObjectInterfaces(s.scheme)
	s.fwd = newForwarder(store, cfg.PeerTransport, cfg.LeaderWait, s.writeError)
	s.authn = &auth.Authenticator{LoopbackToken: cfg.Token, AdminTokenHash: cfg.AdminTokenHash, Tokens: cfg.Tokens, ServiceAccounts: cfg.ServiceAccounts,
		MemberOrg: cfg.MemberOrg, Anonymous: cfg.Anonymous, AnonymousPaths: publicPaths}
	if sa := cfg.ServiceAccounts; sa != nil {
		if sa.Lookup == nil {
			sa.Lookup = s.serviceAccountUID
		}
		if sa.Now == nil {
			sa.Now = cfg.Now
		}
	}
	s.rbac = &auth.RBAC{Policy: s.policy}
	s.authz = &auth.Chain{Node: &auth.NodeAuthorizer{Graph: s.nodeGraph}, RBAC: s.rbac}
	s.authn.Bootstrap = &auth.BootstrapTokens{Lookup: s.bootstrapSecret, Now: cfg.Now}
	mux := http.NewServeMux()
	if err := s.routes(mux); err != nil {
		return nil, err
	}
	s.handler = s.chain(mux)
	if cfg.Metrics != nil {
		cfg.Metrics.MustRegister(newObjectsCollector(s))
	}
	return s, nil
}

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// registry returns the resources served now.
func (s *Server) registry() *registry.Registry { return s.reg.Load() }

func (s *Server) routes(mux *http.ServeMux) error {
	mux.HandleFunc("GET /version", s.serveVersion)
	for _, p := range []string{"/healthz", "/livez"} {
		mux.HandleFunc("GET "+p, serveOK)
	}
	mux.HandleFunc("GET /readyz", s.serveReady)
	s.serveOIDC(mux)
	if s.cfg.Internal != nil {
		mux.Handle("/internal/", s.cfg.Internal)
	}
	if s.cfg.Admin != nil {
		mux.Handle("/admin/", s.cfg.Admin)
	}
	if s.cfg.MetricsHandler != nil {
		mux.Handle("GET /metrics", s.cfg.MetricsHandler)
	}
	if s.cfg.Profiling {
		profiling(mux)
	}
	schemas := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.refreshCRDs(r.Context())
		s.refreshAggregated(r.Context())
		s.schemas.Load().ServeHTTP(w, r)
	})
	for _, p := range []string{"GET /api", "GET /api/{$}", "GET /api/{version}", "GET /apis", "GET /apis/{$}",
		"GET /apis/{group}", "GET /apis/{group}/{$}", "/openapi/"} {
		mux.Handle(p, schemas)
	}
	mux.Handle("GET /apis/{group}/{version}", s.aggregated(schemas))
	res := s.adapt(s.serveResource)
	mux.Handle("/api/v1/", res)
	mux.Handle("/apis/{group}/{version}/", s.aggregated(res))
	return nil
}
