package discovery

import (
	"fmt"
	"log/slog"
	"strings"
)

// Config configures a Handler.
type Config struct {
	// ServerAddress is the "host:port" clients should use, announced in the
	// legacy /api document (APIVersions.serverAddressByClientCIDRs, for
	// 0.0.0.0/0) like kube-apiserver's advertise address. Empty means "the
	// Host the request was sent to".
	ServerAddress string
	// Logger receives failures to write an answer (the client went away).
	Logger *slog.Logger
}

// DefaultConfig returns a Config that announces the request's Host and logs
// to slog.Default().
func DefaultConfig() Config {
	return Config{Logger: slog.Default()}
}

// Validate reports whether c can be used.
func (c Config) Validate() error {
	if c.Logger == nil {
		return fmt.Errorf("discovery: config: no logger: %w", ErrInvalidConfig)
	}
	if strings.ContainsAny(c.ServerAddress, "/ \t\r\n") {
		return fmt.Errorf("discovery: config: server address %q is not host:port: %w", c.ServerAddress, ErrInvalidConfig)
	}
	return nil
}
