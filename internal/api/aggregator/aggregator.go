package aggregator

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"

	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/litek8s/litek8s/internal/api/svcclient"
	"github.com/litek8s/litek8s/internal/kv"
)

// StoreKey is the store's resource name of APIServices.
const StoreKey = "apiservices." + apiregv1.GroupName

// Config configures an Aggregator.
type Config struct {
	// Store reads the member's local store (APIServices, Services,
	// EndpointSlices).
	Store svcclient.Reader
	// ClientCert returns the front-proxy client certificate presented to
	// aggregated servers (CN front-proxy-client).
	ClientCert func() (*tls.Certificate, error)
	Logger     *slog.Logger
}

// Validate reports the first missing setting.
func (c *Config) Validate() error {
	if c.Store == nil || c.ClientCert == nil || c.Logger == nil {
		return errors.New("aggregator: Store, ClientCert and Logger are required")
	}
	return nil
}

// Aggregator routes aggregated group/versions to their Services.
type Aggregator struct {
	cfg     Config
	clients *svcclient.Clients
	// tab is the current table; mu serialises its rebuilds.
	tab atomic.Pointer[table]
	mu  sync.Mutex
	// disco caches the aggregated servers' discovery (discovery.go).
	disco discoveryCache
}

// table maps "group/version" to the APIService proxied there, built from
// the APIServices list at revision rev.
type table struct {
	rev  uint64
	byGV map[string]*apiregv1.APIService
}

// New returns an Aggregator.
func New(cfg Config) (*Aggregator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Aggregator{cfg: cfg, clients: svcclient.New(cfg.Store, cfg.ClientCert)}, nil
}

// Clients returns the clients that reach aggregated servers (the
// available controller and discovery use them too).
func (a *Aggregator) Clients() *svcclient.Clients { return a.clients }

// Close closes idle connections to aggregated servers.
func (a *Aggregator) Close() { a.clients.Close() }

// Lookup returns the APIService with a service that serves groupVersion
// ("group/version"), or ErrNotAggregated.
func (a *Aggregator) Lookup(ctx context.Context, groupVersion string) (*apiregv1.APIService, error) {
	t, err := a.current(ctx)
	if err != nil {
		return nil, err
	}
	if svc := t.byGV[groupVersion]; svc != nil {
		return svc, nil
	}
	return nil, ErrNotAggregated
}

// All returns the APIServices with a service (callers must not change them).
func (a *Aggregator) All(ctx context.Context) ([]*apiregv1.APIService, error) {
	t, err := a.current(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*apiregv1.APIService, 0, len(t.byGV))
	for _, s := range t.byGV {
		out = append(out, s)
	}
	return out, nil
}

// current returns the table for the stored APIServices, rebuilding it
// when they changed.
func (a *Aggregator) current(ctx context.Context) (*table, error) {
	l, err := a.cfg.Store.List(ctx, StoreKey, "", false)
	if err != nil {
		return nil, err
	}
	if t := a.tab.Load(); t != nil && t.rev == l.ModRev {
		return t, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if t := a.tab.Load(); t != nil && t.rev == l.ModRev {
		return t, nil
	}
	t := &table{rev: l.ModRev, byGV: map[string]*apiregv1.APIService{}}
	l.Range("", func(o *kv.Object) bool {
		svc := &apiregv1.APIService{}
		if err := json.Unmarshal(o.Raw, svc); err != nil {
			a.cfg.Logger.Error("stored APIService does not decode", "name", o.Key.Name, "err", err)
			return true
		}
		if svc.Spec.Service != nil && svc.DeletionTimestamp == nil {
			t.byGV[GroupVersion(svc)] = svc
		}
		return true
	})
	a.tab.Store(t)
	return t, nil
}

// GroupVersion is the "group/version" an APIService serves ("v1" for the
// core group).
func GroupVersion(s *apiregv1.APIService) string {
	if s.Spec.Group == "" {
		return s.Spec.Version
	}
	return s.Spec.Group + "/" + s.Spec.Version
}

// Target is where svc's requests go.
func Target(svc *apiregv1.APIService) svcclient.Target {
	ref := svc.Spec.Service
	port := int32(443)
	if ref.Port != nil {
		port = *ref.Port
	}
	return svcclient.Target{Service: &svcclient.ServiceRef{Namespace: ref.Namespace, Name: ref.Name, Port: port},
		CABundle: svc.Spec.CABundle, InsecureSkipTLSVerify: svc.Spec.InsecureSkipTLSVerify}
}
