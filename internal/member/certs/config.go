package certs

import (
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultValidity is the member certificate's lifetime, kubeadm's for the
// certificates it issues with the cluster CA.
const DefaultValidity = 365 * 24 * time.Hour

// MinValidity is the shortest lifetime accepted (tests use 2 minutes):
// the renewal at 2/3 leaves a third of it for the member to renew.
const MinValidity = time.Minute

// MemberServerName is the TLS server name (SNI) members ask for when they
// call each other's API listener, and a DNS name of every member
// certificate: with an operator's serving certificate, the listener
// answers it with the member certificate and every other name with the
// operator's.
const MemberServerName = "member.litek8s.invalid"

// Config configures a Manager. Start from DefaultConfig.
type Config struct {
	// ID is the member's ID: the member certificate's common name.
	ID string
	// IPs and Names are the member certificate's addresses (MemberServerName
	// is added).
	IPs   []net.IP
	Names []string
	// CACert and CAKey (PEM) are the cluster CA that issues the member
	// certificate.
	CACert, CAKey []byte
	// Dir is where the member certificate is kept (the data dir's tls/).
	Dir string
	// Validity is the member certificate's lifetime; it renews at 2/3.
	Validity time.Duration
	// ServingCertFile and ServingKeyFile (both or neither) are the
	// operator's API serving certificate (PEM, the leaf first, then any
	// intermediates) and key.
	ServingCertFile, ServingKeyFile string
	// ReloadInterval is how often the serving files are read again.
	ReloadInterval time.Duration
	// Metrics registers the expiry gauge; Logger logs renewals.
	Metrics prometheus.Registerer
	Logger  *slog.Logger
}

// DefaultConfig returns a Config with the default lifetime and reload
// interval.
func DefaultConfig() Config {
	return Config{Validity: DefaultValidity, ReloadInterval: time.Minute, Logger: slog.Default()}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	switch {
	case c.ID == "" || c.Dir == "":
		return fmt.Errorf("%w config: ID and Dir are required", ErrInvalid)
	case len(c.CACert) == 0 || len(c.CAKey) == 0:
		return fmt.Errorf("%w config: the cluster CA certificate and key are required", ErrInvalid)
	case c.Validity < MinValidity:
		return fmt.Errorf("%w config: certificate validity %s is shorter than %s", ErrInvalid, c.Validity, MinValidity)
	case (c.ServingCertFile == "") != (c.ServingKeyFile == ""):
		return fmt.Errorf("%w config: give both the serving certificate file and its key file, or neither", ErrInvalid)
	case c.ReloadInterval <= 0:
		return fmt.Errorf("%w config: reload interval %s must be positive", ErrInvalid, c.ReloadInterval)
	case c.Logger == nil:
		return fmt.Errorf("%w config: Logger is required", ErrInvalid)
	}
	return nil
}
