package controllers

import (
	"github.com/prometheus/client_golang/prometheus"

	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/litek8s/litek8s/internal/controllers/apiservice"
	"github.com/litek8s/litek8s/internal/controllers/csr"
	"github.com/litek8s/litek8s/internal/controllers/kubernetesservice"
)

// Config configures the controllers. Start from DefaultConfig.
type Config struct {
	// GCWorkers is the number of garbage collector workers deleting
	// dependents (kube's --concurrent-gc-syncs, 20 by default; litek8s's
	// writes are in process, so fewer keep up).
	GCWorkers int
	// RetryBaseDelay and RetryMaxDelay bound the per-object exponential
	// backoff of work that failed (kube: 5 ms to 1000 s).
	RetryBaseDelay, RetryMaxDelay time.Duration
	// RelistDelay is the pause before an informer lists again after a
	// watch failed for another reason than falling behind.
	RelistDelay time.Duration
	// ResourcesInterval is how often the garbage collector looks for
	// resources that appeared or went away (kube: 30 s); a CRD change
	// makes it look at once.
	ResourcesInterval time.Duration
	// Manager is the User-Agent's product, which the API records as the
	// field manager of the controllers' writes; Version is its version.
	// See the package documentation.
	Manager, Version string

	// Disabled names controllers that do not run (their Name(), e.g.
	// "default-scheduler", "deployment"), like kube-controller-manager's
	// --controllers=-name. The garbage collector always runs.
	Disabled []string

	// The typed controllers' settings, each owned by its wire_*.go file.
	Workloads  WorkloadsConfig
	Scheduling SchedulingConfig
	Cluster    ClusterConfig
	// Storage configures the PersistentVolume binder (wire_storage.go).
	Storage StorageConfig
	// Policy configures the disruption controller (wire_policy.go).
	Policy PolicyConfig
	// Certificates configures the CSR approver and signer
	// (wire_certificates.go).
	Certificates csr.Config
	// APIService configures the APIService controller (wire_aggregation.go).
	APIService apiservice.Config
}

// DefaultConfig returns the controllers' defaults.
func DefaultConfig() Config {
	return Config{GCWorkers: 4, RetryBaseDelay: 5 * time.Millisecond, RetryMaxDelay: 30 * time.Second,
		RelistDelay: time.Second, ResourcesInterval: 30 * time.Second,
		Manager: "kube-controller-manager", Version: "v1.37.2-litek8s",
		Workloads: defaultWorkloads(), Scheduling: defaultScheduling(), Cluster: defaultCluster(),
		Certificates: csr.DefaultConfig(), APIService: apiservice.DefaultConfig(),
		Storage: defaultStorage(), Policy: defaultPolicy()}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	switch {
	case c.GCWorkers <= 0:
		return errors.New("controllers: GCWorkers must be positive")
	case c.RetryBaseDelay <= 0 || c.RetryMaxDelay < c.RetryBaseDelay:
		return errors.New("controllers: retry delays must be positive, the maximum at least the base")
	case c.RelistDelay <= 0 || c.ResourcesInterval <= 0:
		return errors.New("controllers: RelistDelay and ResourcesInterval must be positive")
	case c.Manager == "" || c.Version == "":
		return errors.New("controllers: Manager and Version are required")
	}
	return errors.Join(c.Workloads.validate(), c.Scheduling.validate(), c.Cluster.validate(), c.Certificates.Validate(),
		c.Storage.validate(), c.Policy.validate(), c.APIService.Validate())
}

// Options are a Manager's collaborators.
type Options struct {
	Config Config
	// Store is the member's local store (informers, owner lookups).
	Store Store
	// Leadership runs the controllers while this member leads.
	Leadership Leadership
	// API is the member's API handler for in-process writes
	// (api.Server.LocalOnly); Token is the admin bearer token it wants.
	API   http.Handler
	Token string
	// Resources lists the served resources (api.Server.Resources).
	Resources Resources
	// RootCA is the cluster CA certificate (PEM) the root CA publisher puts in every namespace.
	RootCA []byte
	// CAKey is the cluster CA's key (PEM), with which the CSR signer
	// signs; empty: CSRs are not signed.
	CAKey []byte
	// Members lists the members for the default/kubernetes Service's
	// endpoints (nil: that controller does not run).
	Members kubernetesservice.Members
	// APIServices are the APIService controller's collaborators (nil: it
	// does not run): wire_aggregation.go.
	APIServices *APIServices
	// Metrics is the member's registry (nil: no metrics).
	Metrics prometheus.Registerer
	Logger  *slog.Logger
}

func (o *Options) validate() error {
	if err := o.Config.Validate(); err != nil {
		return err
	}
	switch {
	case o.Store == nil || o.Leadership == nil || o.API == nil || o.Resources == nil:
		return errors.New("controllers: Store, Leadership, API and Resources are required")
	case o.Token == "":
		return errors.New("controllers: Token is required")
	case o.Logger == nil:
		return errors.New("controllers: Logger is required")
	}
	return nil
}
