package certs

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// retryAfter is how long a failed renewal waits before the next attempt
// (capped at a tenth of the lifetime for short-lived certificates).
const retryAfter = 10 * time.Second

// Manager holds a member's current certificates and renews them.
type Manager struct {
	cfg     Config
	ca      issuer
	metrics *metrics
	// member and serving are the certificates new handshakes get; serving
	// is nil without an operator's serving certificate.
	member, serving atomic.Pointer[tls.Certificate]
	// mu serializes renewals and reloads; it protects servingPEM (the
	// content of the serving files in use).
	mu         sync.Mutex
	servingPEM []byte
	// kick wakes Run after a Rotate moved the next renewal.
	kick chan struct{}
}

// New loads the member certificate kept in cfg.Dir when it can still
// serve, else issues one and keeps it, and loads the operator's serving
// certificate.
func New(cfg Config) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ca, err := newIssuer(cfg.CACert, cfg.CAKey)
	if err != nil {
		return nil, err
	}
	m := &Manager{cfg: cfg, ca: ca, metrics: newMetrics(cfg.Metrics), kick: make(chan struct{}, 1)}
	m.metrics.set(CertCA, ca.cert)
	kept, ok, err := loadPair(m.memberFile(memberCertFile), m.memberFile(memberKeyFile))
	switch {
	case err != nil:
		cfg.Logger.Warn("the kept member certificate is unusable: issuing a new one", "err", err)
	case ok && ca.reusable(kept.Leaf, cfg.ID, cfg.IPs, cfg.Names):
		m.member.Store(kept)
		m.metrics.set(CertMember, kept.Leaf)
	}
	if m.member.Load() == nil {
		if err := m.renew(); err != nil {
			return nil, err
		}
	}
	if cfg.ServingCertFile != "" {
		if _, err := m.reloadServing(); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Manager) memberFile(name string) string { return filepath.Join(m.cfg.Dir, name) }

// renew issues a new member certificate, keeps it and swaps it in.
func (m *Manager) renew() error {
	c, err := m.ca.issue(m.cfg.ID, m.cfg.IPs, m.cfg.Names, m.cfg.Validity)
	if err != nil {
		return err
	}
	if err := savePair(m.cfg.Dir, c); err != nil {
		return err
	}
	m.member.Store(c)
	m.metrics.set(CertMember, c.Leaf)
	m.cfg.Logger.Info("member certificate issued", "serial", serialHex(c.Leaf.SerialNumber),
		"notAfter", c.Leaf.NotAfter.UTC().Format(time.RFC3339), "renewAt", renewAt(c.Leaf).UTC().Format(time.RFC3339))
	return nil
}

// reloadServing reads the operator's serving files and swaps them in when
// they changed; an invalid pair keeps the one in use (and is an error).
func (m *Manager) reloadServing() (changed bool, err error) {
	cb, err := os.ReadFile(m.cfg.ServingCertFile)
	if err != nil {
		return false, fmt.Errorf("certs: serving certificate: %w", err)
	}
	kb, err := os.ReadFile(m.cfg.ServingKeyFile)
	if err != nil {
		return false, fmt.Errorf("certs: serving key: %w", err)
	}
	both := append(append([]byte{}, cb...), kb...)
	if bytes.Equal(both, m.servingPEM) {
		return false, nil
	}
	c, err := parsePair(cb, kb)
	if err != nil {
		return false, fmt.Errorf("%s: %w", m.cfg.ServingCertFile, err)
	}
	m.servingPEM = both
	m.serving.Store(c)
	m.metrics.set(CertServing, c.Leaf)
	m.cfg.Logger.Info("serving certificate loaded", "file", m.cfg.ServingCertFile, "subject", c.Leaf.Subject.String(),
		"notAfter", c.Leaf.NotAfter.UTC().Format(time.RFC3339))
	return true, nil
}

// Rotate issues a new member certificate now and reads the serving files
// again.
func (m *Manager) Rotate() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.renew(); err != nil {
		return err
	}
	select {
	case m.kick <- struct{}{}:
	default:
	}
	if m.cfg.ServingCertFile != "" {
		if _, err := m.reloadServing(); err != nil {
			return err
		}
	}
	return nil
}

// Run renews the member certificate at 2/3 of its lifetime and reloads the
// serving files every ReloadInterval, until ctx ends.
func (m *Manager) Run(ctx context.Context) {
	reload := time.NewTicker(m.cfg.ReloadInterval)
	defer reload.Stop()
	if m.cfg.ServingCertFile == "" {
		reload.Stop()
	}
	var failed time.Time // the last failed renewal
	for {
		next := time.Until(renewAt(m.member.Load().Leaf))
		if !failed.IsZero() {
			next = max(next, time.Until(failed.Add(min(retryAfter, m.cfg.Validity/10))))
		}
		timer := time.NewTimer(next)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-m.kick:
		case <-reload.C:
			m.mu.Lock()
			if _, err := m.reloadServing(); err != nil {
				m.cfg.Logger.Warn("reloading the serving certificate (the one in use stays)", "err", err)
			}
			m.mu.Unlock()
		case <-timer.C:
			m.mu.Lock()
			failed = time.Time{}
			if time.Now().After(renewAt(m.member.Load().Leaf)) { // not renewed by a Rotate meanwhile
				if err := m.renew(); err != nil {
					failed = time.Now()
					m.cfg.Logger.Error("renewing the member certificate", "err", err)
				}
			}
			m.mu.Unlock()
		}
		timer.Stop()
	}
}

// Member returns the current member certificate.
func (m *Manager) Member() *tls.Certificate { return m.member.Load() }

// GetMemberCertificate is tls.Config.GetCertificate for Raft's listener:
// always the member certificate.
func (m *Manager) GetMemberCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return m.member.Load(), nil
}

// GetCertificate is tls.Config.GetCertificate for the API listener: the
// operator's serving certificate, if any, except to members (who ask for
// MemberServerName).
func (m *Manager) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	if s := m.serving.Load(); s != nil && hello.ServerName != MemberServerName {
		return s, nil
	}
	return m.member.Load(), nil
}

// GetClientCertificate is tls.Config.GetClientCertificate for connections
// this member opens to others.
func (m *Manager) GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return m.member.Load(), nil
}

// ClientCABundle is the PEM that lets clients verify the API listener: the
// cluster CA, and with an operator's serving certificate the CA
// certificates that follow its leaf in the file (its issuers), or the leaf
// itself when it is self-signed.
func (m *Manager) ClientCABundle() []byte {
	out := append([]byte{}, m.cfg.CACert...)
	s := m.serving.Load()
	if s == nil {
		return out
	}
	add := func(der []byte) {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	if leaf := s.Leaf; bytes.Equal(leaf.RawIssuer, leaf.RawSubject) && leaf.CheckSignature(leaf.SignatureAlgorithm, leaf.RawTBSCertificate, leaf.Signature) == nil {
		add(leaf.Raw)
	}
	for _, der := range s.Certificate[1:] {
		if c, err := x509.ParseCertificate(der); err == nil && c.IsCA {
			add(der)
		}
	}
	return out
}
