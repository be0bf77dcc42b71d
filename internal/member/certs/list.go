package certs

import (
	"crypto/x509"
	"path/filepath"
	"time"
)

// Info describes one certificate a member uses.
type Info struct {
	// Name is the cert label of the expiry gauge.
	Name      string
	Subject   string
	Issuer    string
	Serial    string
	NotBefore time.Time
	NotAfter  time.Time
	// RenewAt is when the member renews it (zero: it does not).
	RenewAt time.Time
	// File is where it is kept; Where what it serves.
	File  string
	Where string
}

// List describes the certificates in use now: the member certificate, the
// operator's serving certificate if any, and the cluster CA.
func (m *Manager) List() []Info {
	mc := m.member.Load().Leaf
	memberWhere := "Raft listener and client, API listener, calls to other members"
	out := make([]Info, 0, 3)
	if s := m.serving.Load(); s != nil {
		memberWhere = "Raft listener and client, API listener for members (SNI " + MemberServerName + "), calls to other members"
		out = append(out, info(CertServing, s.Leaf, time.Time{}, m.cfg.ServingCertFile, "API listener for clients (reloaded when the file changes)"))
	}
	out = append(out, info(CertMember, mc, renewAt(mc), filepath.Join(m.cfg.Dir, memberCertFile), memberWhere))
	out = append(out, info(CertCA, m.ca.cert, time.Time{}, filepath.Join(m.cfg.Dir, "ca.crt"),
		"issues member certificates; clients and members verify with it"))
	return out
}

func info(name string, c *x509.Certificate, renew time.Time, file, where string) Info {
	return Info{Name: name, Subject: c.Subject.String(), Issuer: c.Issuer.String(), Serial: serialHex(c.SerialNumber),
		NotBefore: c.NotBefore.UTC(), NotAfter: c.NotAfter.UTC(), RenewAt: renew.UTC(), File: file, Where: where}
}
