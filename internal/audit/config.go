package audit

import (
	"errors"
	"fmt"
)

// Config is where the policy and the log are (kube's --audit-policy-file
// and --audit-log-* flags). An empty PolicyFile turns auditing off.
type Config struct {
	// PolicyFile is an audit.k8s.io/v1 Policy (YAML or JSON).
	PolicyFile string
	// Path is the log file; "-" writes to stdout (kube's meaning). Empty
	// with a PolicyFile is an error: kube without --audit-log-path logs
	// nothing, which is never what a policy asks for.
	Path string
	// MaxSizeMB rotates the file when it reaches this many megabytes
	// (kube's --audit-log-maxsize; 0: lumberjack's 100).
	MaxSizeMB int
	// MaxBackups is how many rotated files are kept (0: all of them,
	// within MaxAgeDays).
	MaxBackups int
	// MaxAgeDays removes rotated files older than this (0: never).
	MaxAgeDays int
}

// DefaultConfig returns auditing off.
func DefaultConfig() Config { return Config{} }

// Enabled reports whether a policy is configured.
func (c *Config) Enabled() bool { return c.PolicyFile != "" }

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	switch {
	case !c.Enabled() && c.Path != "":
		return errors.New("audit: --audit-log-path needs --audit-policy-file")
	case c.Enabled() && c.Path == "":
		return errors.New("audit: --audit-policy-file needs --audit-log-path (a file, or - for stdout)")
	case c.MaxSizeMB < 0 || c.MaxBackups < 0 || c.MaxAgeDays < 0:
		return fmt.Errorf("audit: maxsize (%d), maxbackup (%d) and maxage (%d) must not be negative",
			c.MaxSizeMB, c.MaxBackups, c.MaxAgeDays)
	}
	return nil
}
